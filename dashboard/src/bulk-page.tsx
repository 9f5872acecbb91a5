/**
 * Bulk actions by filter (`POST /jobs/bulk`): pick an action and a filter, see the dry run's count
 * and sample, then confirm exactly that set. A set that changed since its count is counted again
 * and asks for a new confirmation; a long run goes on with its cursor until done.
 */
import { useState } from 'preact/hooks';
import { Notice, PageHead, TableHead, Tiles } from './components';
import { plural, statusText } from './format';
import { useFocusHeading } from './hooks';
import { type JobColumn, JobRow, jobColumns } from './job-row';
import { jobHref } from './routing';
import type { Api, BulkOutcome, BulkPreview, BulkRequestInput, Route, Settings } from './types';

type Action = BulkRequestInput['action'];
type Where = NonNullable<BulkRequestInput['where']>;
type Status = NonNullable<Where['status']>[number];
type FailureKind = NonNullable<Where['failureKind']>;

/** What each action does, in the words of its button, and the statuses it acts on (bulk-request.ts). */
const actions: Record<Action, { verb: string; done: string; what: string; statuses: Status[] }> = {
  retry: {
    verb: 'Retry',
    done: 'Retried',
    what: 'run failed or cancelled jobs again, from the step they stopped at',
    statuses: ['FAILED', 'CANCELLED'],
  },
  redrive: {
    verb: 'Redrive',
    done: 'Redriven',
    what: 'run failed or cancelled items of batches again, and their batches with them',
    statuses: ['FAILED', 'CANCELLED'],
  },
  cancel: {
    verb: 'Cancel',
    done: 'Cancelled',
    what: 'stop unfinished jobs',
    statuses: ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT'],
  },
  answer: {
    verb: 'Answer',
    done: 'Answered',
    what: 'give jobs waiting for a selection the same answer',
    statuses: ['AWAITING_INPUT'],
  },
};

const failureKindList: FailureKind[] = [
  'deadline',
  'not-found',
  'quota-exhausted',
  'throttled',
  'busy',
  'server',
  'network',
  'timeout',
  'invalid-request',
  'auth',
  'forbidden',
  'protocol',
];

/** The columns of the dry run's sample. */
const sampleColumns: JobColumn[] = ['workflow', 'status', 'step', 'created', 'why'];

/** "Older than" choices, in hours. */
const ages: { hours: number; label: string }[] = [
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '1 day' },
  { hours: 24 * 7, label: '7 days' },
  { hours: 24 * 30, label: '30 days' },
];

interface FormState {
  action: Action;
  statuses: Status[];
  workflow: string;
  batchId: string;
  tenant: string;
  label: string;
  failureKind: string;
  olderThan: string;
  since: string;
  until: string;
  fromStart: boolean;
  deadlineHours: string;
  take: 'defaults' | 'selected';
  selected: string;
  by: string;
}

/** The form as the address fills it in (`#/bulk?action=retry&batchId=...`, from the jobs list's filters). */
function initialState(query: URLSearchParams): FormState {
  const action = query.get('action') as Action | null;
  const status = query.get('status') as Status | null;
  // No action named: the first that acts on the status the list was filtered by (cancel for RUNNING).
  const fitting = (Object.keys(actions) as Action[]).find((name) =>
    status ? actions[name].statuses.includes(status) : true,
  );
  const chosen = action && action in actions ? action : (fitting ?? 'retry');
  return {
    action: chosen,
    statuses: status && actions[chosen].statuses.includes(status) ? [status] : [],
    workflow: query.get('workflow') ?? '',
    batchId: query.get('batchId') ?? '',
    tenant: query.get('tenant') ?? '',
    label: '',
    failureKind: '',
    olderThan: '',
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
    fromStart: false,
    deadlineHours: '',
    take: 'defaults',
    selected: '',
    by: '',
  };
}

/** The request body of the form, or what is wrong with it. */
function requestOf(form: FormState, now: number): { body?: BulkRequestInput; problem?: string } {
  const where: Where = {};
  const statuses = form.statuses.filter((status) => actions[form.action].statuses.includes(status));
  if (statuses.length) where.status = statuses;
  if (form.workflow) where.workflow = form.workflow;
  if (form.batchId.trim()) where.batchId = form.batchId.trim();
  if (form.tenant.trim()) where.tenant = form.tenant.trim();
  if (form.label.trim()) where.label = form.label.trim();
  if (form.failureKind) where.failureKind = form.failureKind as FailureKind;
  if (form.since) where.createdAfter = form.since;
  const before = [
    form.until ? Date.parse(form.until) + 86_400_000 - 1 : undefined,
    form.olderThan ? now - Number(form.olderThan) * 3_600_000 : undefined,
  ].filter((value): value is number => value !== undefined);
  if (before.length) where.createdBefore = new Date(Math.min(...before)).toISOString();
  const options: NonNullable<BulkRequestInput['options']> = {};
  if (form.action === 'retry' || form.action === 'redrive') {
    if (form.fromStart) options.fromStart = true;
    if (form.deadlineHours.trim()) {
      const hours = Number(form.deadlineHours);
      if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 366)
        return { problem: 'New deadline must be a number of hours above 0 and at most 8784 (366 days).' };
      options.deadlineMs = Math.round(hours * 3_600_000);
    }
  }
  if (form.action === 'answer') {
    if (form.take === 'defaults') options.take = 'defaults';
    else {
      const ids = form.selected
        .split(/[\s,]+/)
        .map((id) => id.trim())
        .filter(Boolean);
      if (ids.length === 0) return { problem: 'Name the option ids to choose, or take each job’s defaults.' };
      options.selected = ids;
    }
    if (form.by.trim()) options.by = form.by.trim();
  }
  return { body: { action: form.action, where, options } };
}

function Filter(props: { config: Settings; form: FormState; set: (next: Partial<FormState>) => void }) {
  const { config, form, set } = props;
  const text = (name: 'batchId' | 'tenant' | 'label', label: string, hint: string) => (
    <div class="field">
      <label for={`bulk-${name}`}>{label}</label>
      <input
        id={`bulk-${name}`}
        value={form[name]}
        maxLength={200}
        aria-describedby={`bulk-${name}-hint`}
        onInput={(event) => set({ [name]: event.currentTarget.value })}
      />
      <span id={`bulk-${name}-hint`} class="hint">
        {hint}
      </span>
    </div>
  );
  return (
    <fieldset class="form-grid plain">
      <legend>Which jobs</legend>
      <fieldset class="field options">
        <legend>Status</legend>
        {actions[form.action].statuses.map((status) => (
          <label>
            <input
              type="checkbox"
              checked={form.statuses.includes(status)}
              onChange={(event) =>
                set({
                  statuses: event.currentTarget.checked
                    ? [...form.statuses, status]
                    : form.statuses.filter((entry) => entry !== status),
                })
              }
            />
            <span>{statusText(status)}</span>
          </label>
        ))}
        <span class="hint">none ticked: all of these</span>
      </fieldset>
      <div class="field">
        <label for="bulk-workflow">Workflow</label>
        <select
          id="bulk-workflow"
          value={form.workflow}
          onChange={(event) => set({ workflow: event.currentTarget.value })}
        >
          <option value="">any</option>
          {config.workflows.map((name) => (
            <option value={name}>{name}</option>
          ))}
        </select>
      </div>
      {text('batchId', 'Batch', form.action === 'redrive' ? 'any batch when empty' : 'optional')}
      {text('tenant', 'Tenant', 'operators only; a tenant’s own token acts on its own jobs')}
      {text('label', 'Label contains', 'any case')}
      {form.action === 'retry' || form.action === 'redrive' ? (
        <div class="field">
          <label for="bulk-kind">Failed by</label>
          <select
            id="bulk-kind"
            value={form.failureKind}
            onChange={(event) => set({ failureKind: event.currentTarget.value })}
          >
            <option value="">any reason</option>
            {failureKindList.map((kind) => (
              <option value={kind}>{kind}</option>
            ))}
          </select>
        </div>
      ) : null}
      <div class="field">
        <label for="bulk-age">Older than</label>
        <select
          id="bulk-age"
          value={form.olderThan}
          onChange={(event) => set({ olderThan: event.currentTarget.value })}
        >
          <option value="">any age</option>
          {ages.map((age) => (
            <option value={String(age.hours)}>{age.label}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="bulk-since">Created from</label>
        <input
          id="bulk-since"
          type="date"
          value={form.since}
          onInput={(event) => set({ since: event.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for="bulk-until">Created to</label>
        <input
          id="bulk-until"
          type="date"
          value={form.until}
          onInput={(event) => set({ until: event.currentTarget.value })}
        />
      </div>
    </fieldset>
  );
}

function Options({ form, set }: { form: FormState; set: (next: Partial<FormState>) => void }) {
  if (form.action === 'retry' || form.action === 'redrive')
    return (
      <fieldset class="form-grid plain">
        <legend>How</legend>
        <div class="field check">
          <input
            id="bulk-from-start"
            type="checkbox"
            checked={form.fromStart}
            onChange={(event) => set({ fromStart: event.currentTarget.checked })}
            aria-describedby="bulk-from-start-hint"
          />
          <label for="bulk-from-start">From the first step</label>
          <span id="bulk-from-start-hint" class="hint">
            paid calls already made are made again, counted as repeats
          </span>
        </div>
        <div class="field">
          <label for="bulk-deadline">New deadline (hours)</label>
          <input
            id="bulk-deadline"
            inputMode="decimal"
            value={form.deadlineHours}
            onInput={(event) => set({ deadlineHours: event.currentTarget.value })}
            aria-describedby="bulk-deadline-hint"
          />
          <span id="bulk-deadline-hint" class="hint">
            optional; default: as long as each job had (jobs failed on their deadline need more)
          </span>
        </div>
      </fieldset>
    );
  if (form.action === 'answer')
    return (
      <fieldset class="form-grid plain">
        <legend>The answer</legend>
        <fieldset class="field options">
          <legend>Choose</legend>
          <label>
            <input
              type="radio"
              name="bulk-take"
              checked={form.take === 'defaults'}
              onChange={() => set({ take: 'defaults' })}
            />
            <span>each job’s defaults (the options the platform marked, or all)</span>
          </label>
          <label>
            <input
              type="radio"
              name="bulk-take"
              checked={form.take === 'selected'}
              onChange={() => set({ take: 'selected' })}
            />
            <span>these option ids</span>
          </label>
        </fieldset>
        {form.take === 'selected' ? (
          <div class="field">
            <label for="bulk-selected">Option ids</label>
            <input
              id="bulk-selected"
              value={form.selected}
              onInput={(event) => set({ selected: event.currentTarget.value })}
              aria-describedby="bulk-selected-hint"
            />
            <span id="bulk-selected-hint" class="hint">
              separated by commas; a job that does not offer them is skipped
            </span>
          </div>
        ) : null}
        <div class="field">
          <label for="bulk-by">Answered by</label>
          <input
            id="bulk-by"
            value={form.by}
            maxLength={100}
            onInput={(event) => set({ by: event.currentTarget.value })}
            aria-describedby="bulk-by-hint"
          />
          <span id="bulk-by-hint" class="hint">
            your name or mail address, kept in each job’s answers
          </span>
        </div>
      </fieldset>
    );
  return null;
}

function PreviewView(props: {
  config: Settings;
  preview: BulkPreview;
  busy: boolean;
  onConfirm: () => void;
}) {
  const { config, preview, busy, onConfirm } = props;
  const verb = actions[preview.action].verb;
  return (
    <section class="card" aria-labelledby="preview-heading">
      <h2 id="preview-heading">What it would do</h2>
      <Tiles
        label="The dry run"
        tiles={[
          {
            label: `Jobs to ${verb.toLowerCase()}`,
            value: preview.count.toLocaleString(),
            tone: preview.count ? 'wait' : undefined,
          },
          { label: 'Among', value: preview.statuses.map(statusText).join(', ') },
          { label: 'Shown below', value: preview.sample.length.toLocaleString() },
        ]}
      />
      {preview.sample.length > 0 ? (
        <div class="table-card">
          <table class="jobs">
            <caption>
              {preview.sample.length < preview.count
                ? `The first ${preview.sample.length} of the ${plural(preview.count, 'job')}`
                : `The ${plural(preview.count, 'job')}`}
            </caption>
            <TableHead columns={jobColumns(sampleColumns)} />
            <tbody>
              {preview.sample.map((job) => (
                <JobRow
                  key={job.id}
                  config={config}
                  job={{ ...job, lastError: job.error }}
                  columns={sampleColumns}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div class="actions">
        <button class="primary" type="button" disabled={busy || preview.count === 0} onClick={onConfirm}>
          {verb} {plural(preview.count, 'job')}
        </button>
        <span class="muted small">
          {preview.count === 0
            ? 'Nothing matches: change the filter.'
            : 'Only these jobs: if the set changes before you confirm, it is counted again.'}
        </span>
      </div>
    </section>
  );
}

function OutcomeView({ outcome }: { outcome: BulkOutcome }) {
  const { done } = actions[outcome.action];
  return (
    <section class="card" aria-labelledby="outcome-heading">
      <h2 id="outcome-heading">What it did</h2>
      <Tiles
        label="The outcome"
        tiles={[
          { label: done, value: outcome.done.toLocaleString(), tone: 'ok' },
          {
            label: 'Skipped',
            value: outcome.skipped.toLocaleString(),
            tone: outcome.skipped ? 'bad' : undefined,
            sub: outcome.skipped ? 'changed since the count, or refused' : undefined,
          },
          { label: 'Counted', value: outcome.count.toLocaleString() },
          ...(outcome.batches.length
            ? [{ label: 'Batches running again', value: outcome.batches.join(', ') }]
            : []),
        ]}
      />
      {outcome.doneSample.length > 0 ? (
        <p>
          Acted on:{' '}
          {outcome.doneSample.map((id, index) => (
            <>
              {index ? ', ' : ''}
              <a href={jobHref(id)}>{id}</a>
            </>
          ))}
          {outcome.done > outcome.doneSample.length
            ? ` and ${outcome.done - outcome.doneSample.length} more`
            : ''}
          .
        </p>
      ) : null}
      {outcome.skippedSample.length > 0 ? (
        <div class="table-card">
          <table class="jobs">
            <caption>Skipped, and why</caption>
            <TableHead columns={['Job', 'Why']} />
            <tbody>
              {outcome.skippedSample.map((entry) => (
                <tr key={entry.jobId}>
                  <td>
                    <a href={jobHref(entry.jobId)}>{entry.jobId}</a>
                  </td>
                  <td>{entry.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

export function BulkPage({ api, config, route }: { api: Api; config: Settings; route: Route }) {
  const heading = useFocusHeading('bulk');
  const [form, setForm] = useState<FormState>(() => initialState(route.query));
  const [preview, setPreview] = useState<{ key: string; body: BulkRequestInput; answer: BulkPreview }>();
  const [outcome, setOutcome] = useState<BulkOutcome | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [note, setNote] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const set = (next: Partial<FormState>) => setForm({ ...form, ...next });
  // A dry run holds for exactly the form it counted: any change asks for a new one.
  const key = JSON.stringify(form);
  const current = preview?.key === key ? preview : undefined;

  const count = async (event?: Event) => {
    event?.preventDefault();
    const { body, problem } = requestOf(form, Date.now());
    setOutcome(undefined);
    setNote(undefined);
    if (!body) {
      setError(problem);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api<BulkPreview>('POST', '/jobs/bulk', { ...body, dryRun: true });
      setPreview({ key, body, answer });
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const confirm = async () => {
    if (!current) return;
    setBusy(true);
    setError(undefined);
    setNote(undefined);
    const { body, answer } = current;
    try {
      let step = await api<BulkOutcome>('POST', '/jobs/bulk', {
        ...body,
        confirm: { count: answer.count, selection: answer.selection },
      });
      const skippedSample = [...step.skippedSample];
      const doneSample = [...step.doneSample];
      // A long run answers with a cursor: go on until it is done.
      while (step.cursor) {
        step = await api<BulkOutcome>('POST', '/jobs/bulk', { ...body, cursor: step.cursor });
        skippedSample.push(...step.skippedSample);
        doneSample.push(...step.doneSample);
      }
      setOutcome({ ...step, skippedSample: skippedSample.slice(0, 50), doneSample: doneSample.slice(0, 20) });
      setPreview(undefined);
    } catch (failure) {
      if ((failure as { code?: string }).code !== 'selection-changed') {
        setError((failure as Error).message);
        return;
      }
      // The set moved since the count: count it again and ask once more.
      const again = await api<BulkPreview>('POST', '/jobs/bulk', { ...body, dryRun: true }).catch(
        (problem: Error) => problem,
      );
      if (again instanceof Error) setError(again.message);
      else {
        setPreview({ key, body, answer: again });
        setNote(
          `The jobs changed since they were counted (${plural(answer.count, 'job')} then, ${again.count} now). Look again and confirm.`,
        );
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main">
      <PageHead
        heading={heading}
        title="Bulk actions"
        subtitle="Retry, redrive, cancel or answer every job a filter selects, across batches. Count first: nothing changes until you confirm what was counted."
      />
      <form class="card" onSubmit={count} aria-labelledby="bulk-heading">
        <h2 id="bulk-heading">What to do</h2>
        <fieldset class="options action-choice">
          <legend>Action</legend>
          {(Object.keys(actions) as Action[]).map((action) => (
            <label>
              <input
                type="radio"
                name="bulk-action"
                value={action}
                checked={form.action === action}
                onChange={() => set({ action })}
              />
              <span>
                {actions[action].verb}
                <span class="detail">{actions[action].what}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <Filter config={config} form={form} set={set} />
        <Options form={form} set={set} />
        <Notice error={error} />
        <div class="actions">
          <button class="primary" type="submit" disabled={busy}>
            Count the jobs
          </button>
          <span class="muted small">A count (a dry run) changes nothing.</span>
        </div>
      </form>
      <div aria-live="polite">
        <Notice ok={note} />
        {current ? (
          <PreviewView config={config} preview={current.answer} busy={busy} onConfirm={confirm} />
        ) : null}
        {outcome ? <OutcomeView outcome={outcome} /> : null}
      </div>
    </main>
  );
}
