/** The jobs list: filters and search, status changes announced, waiting jobs answered together. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Notice, PageHead, Pager, TableHead } from './components';
import { jobTitle, plural } from './format';
import { type NoticeText, useFocusHeading, useLoaded } from './hooks';
import { type JobColumn, JobRow, jobColumns } from './job-row';
import { bulkHash, type Filters as FilterValues, filterQuery, jobsHash } from './routing';
import type { Api, JobPage, JobView, Route, Settings } from './types';

export const listRefreshMs = 2000;

const listColumns: JobColumn[] = ['workflow', 'status', 'step', 'created', 'took', 'billed'];

const filterNames = ['status', 'workflow', 'batchId', 'tenant', 'source', 'since', 'until', 'q'] as const;
type JobFilters = Record<(typeof filterNames)[number], string>;

function readFilters(query: URLSearchParams): JobFilters {
  const filters = {} as JobFilters;
  for (const name of filterNames) filters[name] = query.get(name) ?? '';
  return filters;
}

function Filters(props: { config: Settings; filters: JobFilters; onChange: (next: FilterValues) => void }) {
  const { config, filters, onChange } = props;
  const [draft, setDraft] = useState(filters);
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const set = (name: keyof JobFilters) => (event: { currentTarget: HTMLInputElement }) =>
    setDraft({ ...draft, [name]: event.currentTarget.value });
  const submit = (event: Event) => {
    event.preventDefault();
    onChange(draft);
  };
  const select = (name: keyof JobFilters, label: string, values: readonly string[]) => (
    <label>
      {label}
      <select
        name={name}
        value={draft[name]}
        onChange={(event) => onChange({ ...draft, [name]: event.currentTarget.value })}
      >
        <option value="">any</option>
        {values.map((value) => (
          <option value={value}>{value}</option>
        ))}
      </select>
    </label>
  );
  return (
    // biome-ignore lint/a11y/useSemanticElements: a form of role search is the landmark screen readers know
    <form class="filters" role="search" aria-label="Filter jobs" onSubmit={submit}>
      <label class="search">
        Search title and input text
        <input type="search" name="q" value={draft.q} onInput={set('q')} placeholder="e.g. helmet" />
      </label>
      {select('status', 'Status', config.statuses)}
      {select('workflow', 'Workflow', config.workflows)}
      {select('source', 'Source', config.sources)}
      <label>
        Batch
        <input name="batchId" value={draft.batchId} onInput={set('batchId')} size={12} />
      </label>
      <label>
        Tenant
        <input name="tenant" value={draft.tenant} onInput={set('tenant')} size={10} />
      </label>
      <label>
        Created from
        <input type="date" name="since" value={draft.since} onInput={set('since')} />
      </label>
      <label>
        Created to
        <input type="date" name="until" value={draft.until} onInput={set('until')} />
      </label>
      <button type="submit">Apply</button>
      <button type="button" onClick={() => onChange({})}>
        Clear
      </button>
    </form>
  );
}

function BulkAnswer(props: {
  api: Api;
  jobs: JobView[];
  onDone: () => void;
  onOutcome: (notice: NoticeText) => void;
}) {
  const { api, jobs, onDone, onOutcome } = props;
  // The options every chosen job offers (by id), with the first job's labels.
  const offers = jobs.flatMap((job) => (job.pending ? [job.pending] : []));
  const common = offers[0]
    ? offers[0].options.filter((option) =>
        offers.every((offer) => offer.options.some((o) => o.id === option.id)),
      )
    : [];
  const [chosen, setChosen] = useState(() => common.filter((option) => option.preselected).map((o) => o.id));
  const [busy, setBusy] = useState(false);
  if (!offers[0]) return null;
  const toggle = (id: string) =>
    setChosen(chosen.includes(id) ? chosen.filter((value) => value !== id) : [...chosen, id]);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const failures: string[] = [];
    for (const job of jobs) {
      try {
        await api('POST', `/jobs/${encodeURIComponent(job.id)}/selection`, { selected: chosen });
      } catch (error) {
        failures.push(`${jobTitle(job)}: ${(error as Error).message}`);
      }
    }
    setBusy(false);
    onOutcome(
      failures.length
        ? {
            error: `${plural(jobs.length - failures.length, 'job')} answered; refused: ${failures.join('; ')}`,
          }
        : { ok: `${plural(jobs.length, 'job')} answered` },
    );
    onDone();
  };
  return (
    <section class="panel attention" aria-labelledby="bulk-heading">
      <h2 id="bulk-heading">Answer {plural(offers.length, 'waiting job')} at once</h2>
      <p class="muted small">{offers[0].prompt} The same options go to every selected job.</p>
      {common.length === 0 ? (
        <p>The selected jobs offer no option in common; answer them one by one.</p>
      ) : (
        <form onSubmit={submit}>
          <fieldset class="options">
            <legend>Options offered by all of them</legend>
            {common.map((option) => (
              <label>
                <input
                  type="checkbox"
                  checked={chosen.includes(option.id)}
                  onChange={() => toggle(option.id)}
                />
                <span>
                  {option.label}
                  {option.detail ? <span class="detail">{option.detail}</span> : null}
                </span>
              </label>
            ))}
          </fieldset>
          <button class="primary" type="submit" disabled={busy || chosen.length === 0}>
            Submit to {plural(offers.length, 'job')}
          </button>
        </form>
      )}
    </section>
  );
}

export function JobsPage({ api, config, route }: { api: Api; config: Settings; route: Route }) {
  const filters = readFilters(route.query);
  const cursor = route.query.get('cursor') ?? '';
  const trail = route.query.getAll('prev');
  const [checked, setChecked] = useState<string[]>([]);
  const [announcement, setAnnouncement] = useState('');
  const [outcome, setOutcome] = useState<NoticeText>({});
  const previous = useRef(new Map<string, string>());
  const heading = useFocusHeading('jobs');

  const {
    data: page,
    error,
    load,
  } = useLoaded(
    async () => {
      const query = filterQuery(filters, cursor);
      query.set('limit', '25');
      const answer = await api<JobPage>('GET', `/jobs?${query}`);
      // Tell screen readers about jobs on this page that changed status since the last look.
      const changes: string[] = [];
      for (const job of answer.jobs) {
        const before = previous.current.get(job.id);
        if (before && before !== job.status) changes.push(`${jobTitle(job)} is now ${job.status}`);
        previous.current.set(job.id, job.status);
      }
      if (changes.length) setAnnouncement(changes.join('. '));
      return answer;
    },
    [api, JSON.stringify(filters), cursor],
    listRefreshMs,
    undefined,
    { api, config, filter: {} },
  );
  useEffect(() => setChecked([]), [load]);

  const go = (next: FilterValues) => {
    location.hash = jobsHash(next);
  };
  const jobs = page?.jobs ?? [];
  const waiting = jobs.filter((job) => job.status === 'AWAITING_INPUT');
  const chosenJobs = waiting.filter((job) => checked.includes(job.id));
  const toggle = (id: string) =>
    setChecked(checked.includes(id) ? checked.filter((v) => v !== id) : [...checked, id]);

  return (
    <main id="main">
      <PageHead
        heading={heading}
        title="Jobs"
        subtitle="Every job of this server, newest first; the list updates itself while the tab is open."
      >
        <a class="button" href={bulkHash(filters)}>
          Act on these jobs…
        </a>
        {config.starts?.jobs ? (
          <a class="button primary" href="#/new">
            New job
          </a>
        ) : null}
      </PageHead>
      <Filters config={config} filters={filters} onChange={go} />
      <Notice error={error} />
      <Notice {...outcome} />
      <p class="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {chosenJobs.length > 0 ? (
        <BulkAnswer
          key={chosenJobs.map((j) => j.id).join()}
          api={api}
          jobs={chosenJobs}
          onOutcome={setOutcome}
          onDone={() => {
            setChecked([]);
            load();
          }}
        />
      ) : null}
      {page === undefined ? (
        <p aria-busy="true">Loading jobs…</p>
      ) : (
        <div class="table-card">
          <table class="jobs">
            <caption>
              {jobs.length === 0
                ? 'No jobs match.'
                : `${plural(jobs.length, 'job')} on this page, newest first; the list updates itself.`}
              {waiting.length > 0 ? ' Tick waiting jobs to answer their selection together.' : ''}
            </caption>
            <TableHead columns={jobColumns(listColumns, true)} />
            <tbody>
              {jobs.map((job) => (
                <JobRow
                  key={job.id}
                  config={config}
                  job={job}
                  columns={listColumns}
                  select={
                    job.status === 'AWAITING_INPUT' ? (
                      <input
                        type="checkbox"
                        aria-label={`Select ${jobTitle(job)} to answer`}
                        checked={checked.includes(job.id)}
                        onChange={() => toggle(job.id)}
                      />
                    ) : null
                  }
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager path="/" filters={filters} cursor={cursor} trail={trail} next={page?.cursor} />
    </main>
  );
}
