/** The schedules of opflow.config.json: next and last fire, last job, and trigger, pause, resume. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Notice, StatusBadge, When } from './components';
import { capsText, formatDuration, formatRelative, formatTime, jobDuration, plural } from './format';
import { useAction, useFocusHeading, useLoaded } from './hooks';
import { ListTable } from './list-table';
import { jobHref } from './routing';
import type { Api, JobPage, JobView, ReportAnswer, ScheduleView } from './types';

/** What result.json's `changes` holds (shared/schedules/changes.ts), as far as the page reads it. */
interface RunChanges {
  first: boolean;
  unchanged: boolean;
  lists: { kind: string; added: unknown[]; removed: unknown[] }[];
  counts: { name: string; before?: number; now: number; delta?: number }[];
  sections: { added: string[]; removed: string[]; changed: string[] };
  answer?: 'changed' | 'unchanged' | 'new';
}

/** Runs whose changes are read (the latest ones that succeeded); the others link to their report. */
const runsWithChanges = 20;

const signed = (n: number) => (n > 0 ? `+${n.toLocaleString()}` : n < 0 ? `−${(-n).toLocaleString()}` : '±0');

/** What changed since the run before, in a few words. */
export function changesText(changes: RunChanges): string {
  if (changes.first) return 'first run: nothing to compare with';
  if (changes.unchanged) return 'nothing changed';
  const parts: string[] = [];
  for (const item of changes.counts)
    if (item.delta !== undefined && item.delta !== 0)
      parts.push(
        `${item.name} ${signed(item.delta)} (${item.before?.toLocaleString()} → ${item.now.toLocaleString()})`,
      );
  for (const list of changes.lists)
    if (list.added.length + list.removed.length > 0)
      parts.push(`${list.kind}: ${list.added.length} new, ${list.removed.length} dropped`);
  const { added, removed, changed } = changes.sections;
  const sections = added.length + removed.length + changed.length;
  if (sections > 0) parts.push(`${plural(sections, 'report section')} changed`);
  if (changes.answer === 'changed' || changes.answer === 'new') parts.push('the answer changed');
  return parts.join('; ') || 'nothing changed';
}

/** The changes of each succeeded run (read once: a finished run's report does not change). */
function useRunChanges(api: Api, jobs: JobView[]): Map<string, RunChanges | 'unknown'> {
  const [found, setFound] = useState(new Map<string, RunChanges | 'unknown'>());
  const wanted = jobs
    .filter((job) => job.status === 'SUCCEEDED')
    .slice(0, runsWithChanges)
    .map((job) => job.id);
  const key = wanted.join(',');
  useEffect(() => {
    let live = true;
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length === 0) return;
    void Promise.all(
      missing.map(async (id): Promise<[string, RunChanges | 'unknown']> => {
        try {
          const answer = await api<ReportAnswer>(
            'GET',
            `/jobs/${encodeURIComponent(id)}/report?file=result.json`,
          );
          const file = answer.files.find((candidate) => candidate.name === 'result.json');
          // Served by this server (with the token); a presigned link elsewhere is not read from the page.
          if (!file?.href) return [id, 'unknown'];
          const result = await api<{ changes?: RunChanges }>('GET', file.href);
          return [id, result.changes ?? 'unknown'];
        } catch {
          return [id, 'unknown'];
        }
      }),
    ).then((entries) => {
      if (live) setFound((before) => new Map([...before, ...entries]));
    });
    return () => {
      live = false;
    };
  }, [api, key]);
  return found;
}

/** A schedule's row: its slots, its state, its last fire and job, and what can be done to it. */
function ScheduleRow(props: {
  schedule: ScheduleView;
  busy: boolean;
  pausing: string | undefined;
  onTrigger: (name: string) => void;
  onPause: (name: string) => void;
  onResume: (name: string) => void;
}) {
  const { schedule, busy, pausing, onTrigger, onPause, onResume } = props;
  return (
    <tr data-schedule={schedule.name} data-state={schedule.pause ? 'paused' : 'active'}>
      <td class="nowrap">{schedule.name}</td>
      <td>
        {/* The zone on a line of its own: a six-field cron in a long zone name would otherwise push
            the row's actions out of view. */}
        <code class="nowrap">{schedule.cron}</code>
        <span class="sub">{schedule.timezone}</span>
      </td>
      <td class="nowrap">{schedule.workflow}</td>
      <td class="state-cell">
        {schedule.pause ? (
          <>
            <StatusBadge status="PAUSED" />{' '}
            {/* Clamped to a few lines so the row's actions stay in view; the whole reason is in the
                DOM (read aloud, found by search) and in the tooltip. */}
            <span class="reason-clamp" title={schedule.pause.reason}>
              {schedule.pause.reason}
            </span>
            <div class="small muted">
              {schedule.pause.by === 'config'
                ? 'in opflow.config.json'
                : `since ${formatTime(schedule.pause.at)}`}
            </div>
          </>
        ) : (
          <StatusBadge status="ACTIVE" />
        )}
        {schedule.caps ? (
          <div class="small muted" data-caps>
            {capsText(schedule.caps)}
          </div>
        ) : null}
      </td>
      <td>
        {schedule.next ? (
          <>
            <When at={schedule.next} />
            <span class="sub">{formatRelative(schedule.next)}</span>
          </>
        ) : (
          'none while paused'
        )}
      </td>
      <td>{schedule.lastFired ? <When at={schedule.lastFired} /> : 'never'}</td>
      <td>{schedule.lastJob ? <a href={jobHref(schedule.lastJob.id)}>{schedule.lastJob.status}</a> : ''}</td>
      <td>{schedule.skipped}</td>
      <td class="row-actions">
        <button
          type="button"
          disabled={busy}
          onClick={() => onTrigger(schedule.name)}
          aria-label={`Trigger now: ${schedule.name}`}
        >
          Trigger now
        </button>
        {schedule.pause === undefined ? (
          <button
            type="button"
            disabled={busy}
            aria-label={`Pause: ${schedule.name}`}
            aria-expanded={pausing === schedule.name ? 'true' : 'false'}
            onClick={() => onPause(schedule.name)}
          >
            Pause…
          </button>
        ) : schedule.pause.by === 'runtime' ? (
          <button
            type="button"
            class="primary"
            disabled={busy}
            aria-label={`Resume: ${schedule.name}`}
            onClick={() => onResume(schedule.name)}
          >
            Resume
          </button>
        ) : null}
      </td>
    </tr>
  );
}

export function SchedulesPage({ api }: { api: Api }) {
  const heading = useFocusHeading('schedules');
  const {
    data: answer,
    error,
    load,
  } = useLoaded(() => api<{ schedules: ScheduleView[] }>('GET', '/schedules'), [api], 5000);
  // The runs of the schedules: jobs of source "schedule", whose key names the schedule and slot.
  const { data: runs } = useLoaded(
    () => api<JobPage>('GET', '/jobs?source=schedule&limit=200'),
    [api],
    10_000,
  );
  const { busy, notice, run } = useAction(load);
  // The schedule whose pause form is open, and the reason typed in it.
  const [pausing, setPausing] = useState<string | undefined>(undefined);
  const [reason, setReason] = useState('');
  const reasonField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (pausing) reasonField.current?.focus();
  }, [pausing]);
  // After a pause or resume (or closing the form), the focus goes back to the schedule's row: to
  // the button that undoes what was done, once the page shows it.
  const [returnTo, setReturnTo] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!returnTo || busy) return;
    const button = document.querySelector<HTMLButtonElement>(
      `tr[data-schedule="${CSS.escape(returnTo)}"] td.row-actions button:last-child`,
    );
    if (button) {
      button.focus();
      setReturnTo(undefined);
    }
  }, [returnTo, busy, answer]);
  const closeForm = () => {
    setReturnTo(pausing);
    setPausing(undefined);
  };
  const path = (name: string, action: string) => `/schedules/${encodeURIComponent(name)}/${action}`;
  const trigger = (name: string) =>
    run(async () => {
      const outcome = await api<{ jobId: string }>('POST', path(name, 'trigger'));
      return `${name}: job ${outcome.jobId} started.`;
    });
  const pause = (event: Event) => {
    event.preventDefault();
    const name = pausing;
    if (!name) return;
    run(async () => {
      await api('POST', path(name, 'pause'), { reason });
      closeForm();
      setReason('');
      return `${name} paused: its slots are skipped until it is resumed.`;
    });
  };
  const resume = (name: string) =>
    run(async () => {
      const outcome = await api<{ schedule: ScheduleView }>('POST', path(name, 'resume'));
      setReturnTo(name);
      return `${name} resumed: next fire ${formatTime(outcome.schedule.next)}.`;
    });
  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Schedules
      </h1>
      <p class="muted small">
        Declared in opflow.config.json and fired by this server (on AWS, by EventBridge Scheduler). A pause
        set here holds for every process until it is resumed; a pause written in the file (
        <code>"paused": {'{"reason": "..."}'}</code>) is lifted only there.
      </p>
      <Notice {...(notice ?? {})} />
      <Notice error={error} />
      {pausing ? (
        <section class="panel attention" aria-labelledby="pause-heading">
          <h2 id="pause-heading">Pause {pausing}</h2>
          <form onSubmit={pause}>
            <p class="field">
              <label for="pause-reason">Why (shown beside the schedule)</label>
              <input
                id="pause-reason"
                ref={reasonField}
                required
                maxLength={500}
                size={50}
                value={reason}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
            </p>
            <div class="actions">
              <button class="primary" type="submit" disabled={busy || reason.trim() === ''}>
                Pause {pausing}
              </button>
              <button type="button" onClick={closeForm}>
                Keep it running
              </button>
            </div>
          </form>
        </section>
      ) : null}
      <ListTable
        rows={answer?.schedules}
        loading="Loading schedules…"
        columns={[
          'Schedule',
          'When',
          'Workflow',
          'State',
          'Next fire',
          'Last fire',
          'Last job',
          'Skipped slots',
          { label: 'Actions', hidden: true },
        ]}
        empty='No schedules: declare them under "schedules" in opflow.config.json.'
        caption={(schedules) => plural(schedules.length, 'schedule')}
        row={(schedule) => (
          <ScheduleRow
            key={schedule.name}
            schedule={schedule}
            busy={busy}
            pausing={pausing}
            onTrigger={trigger}
            onPause={setPausing}
            onResume={resume}
          />
        )}
      />
      {runs && runs.jobs.length > 0 ? <RunHistory api={api} jobs={runs.jobs} /> : null}
    </main>
  );
}

/** The latest runs of every schedule: when its slot was, the job, how it ended, what it cost. */
function RunHistory({ api, jobs }: { api: Api; jobs: JobView[] }) {
  const changes = useRunChanges(api, jobs);
  const rows = jobs.flatMap((job) => {
    const match = /^schedule:(.+):(\d{4}-\d\d-\d\dT[\d:.]+Z)(:manual)?$/.exec(job.idempotencyKey ?? '');
    return match ? [{ job, schedule: match[1]!, slot: match[2]!, manual: match[3] !== undefined }] : [];
  });
  return (
    <section class="card" aria-labelledby="runs-heading">
      <h2 id="runs-heading">Run history</h2>
      <p class="muted small">
        The latest runs, newest first, each with what changed since the run before it; its report opens with
        the details.
      </p>
      <ListTable
        rows={rows}
        loading="Loading runs…"
        card={false}
        captionHidden
        columns={[
          'Schedule',
          'Slot',
          'Status',
          'Job',
          { label: 'Took', num: true },
          { label: 'Billed units', num: true },
          'Changes',
        ]}
        empty="No runs of the schedules"
        caption={(shown) => `${plural(shown.length, 'run')} of the schedules`}
        row={({ job, schedule, slot, manual }) => (
          <tr key={job.id} data-run={job.id}>
            <td class="nowrap">{schedule}</td>
            <td class="nowrap">
              <When at={slot} />
              {manual ? <span class="sub">triggered by hand</span> : null}
            </td>
            <td>
              <StatusBadge status={job.status} />
            </td>
            <td>
              <a href={jobHref(job.id)}>
                <code class="id">{job.id}</code>
              </a>
            </td>
            <td class="num">{formatDuration(jobDuration(job))}</td>
            <td class="num">{job.usage?.billedUnits ?? 0}</td>
            <td data-changes={job.id}>
              {job.status === 'SUCCEEDED' ? (
                <>
                  {(() => {
                    const found = changes.get(job.id);
                    return found === undefined || found === 'unknown' ? null : (
                      <span class="changes">{changesText(found)} </span>
                    );
                  })()}
                  <a href={`#/jobs/${encodeURIComponent(job.id)}/report`}>the report</a>
                </>
              ) : (
                <span class="muted">none (no report)</span>
              )}
            </td>
          </tr>
        )}
      />
    </section>
  );
}
