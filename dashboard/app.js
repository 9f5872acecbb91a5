// The opflow dashboard: Preact + htm as plain ES modules (no build step), talking to the job API of
// `opflow serve` (same origin) or of the AWS stack (a static build's ui/config.json names it).
// Every request sends JSON and the bearer token the person typed in (kept for this tab only).

import { useCallback, useEffect, useMemo, useRef, useState } from './vendor/hooks.mjs';
import htm from './vendor/htm.mjs';
import { h, render } from './vendor/preact.mjs';

const html = htm.bind(h);

const tokenKey = 'opflow.token';
const unfinished = ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT'];
const listRefreshMs = 2000;
const jobRefreshMs = 1500;

/** Settings: where the API is, what to offer in the filters. */
const defaults = {
  apiBase: '',
  workflows: [],
  statuses: ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT', 'SUCCEEDED', 'FAILED', 'CANCELLED'],
  sources: ['cli', 'api', 'webhook', 'schedule', 'bulk'],
  timeline: false,
};

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function createApi(config, onUnauthorized) {
  const base = config.apiBase.replace(/\/+$/, '');
  return async function request(method, path, payload) {
    // Every POST says JSON, even one with nothing to send (the server refuses anything else).
    const body = payload === undefined && method !== 'GET' ? {} : payload;
    const headers = { accept: 'application/json' };
    const token = sessionStorage.getItem(tokenKey);
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch (error) {
      throw new ApiError(0, 'network', `the job API cannot be reached (${error.message})`);
    }
    const type = response.headers.get('content-type') ?? '';
    const answer = type.includes('json') ? await response.json() : await response.text();
    if (!response.ok) {
      const error = typeof answer === 'object' && answer?.error ? answer.error : {};
      const failure = new ApiError(
        response.status,
        error.code ?? 'error',
        error.message ?? `the job API answered ${response.status}`,
      );
      if (response.status === 401) onUnauthorized(failure);
      throw failure;
    }
    return answer;
  };
}

// ---- formatting ----------------------------------------------------------------------------------

function toDate(value) {
  if (value === undefined || value === null || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
function formatTime(value) {
  const date = toDate(value);
  if (!date) return '';
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString()
    : `${date.toLocaleDateString()} ${date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`;
}
function formatDuration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
function plural(count, word, many = `${word}s`) {
  return `${count} ${count === 1 ? word : many}`;
}
function jobTitle(job) {
  return job.title ?? job.label ?? job.id;
}
/** Which upstream served a job, for people ("sandbox (simulated data)", a URL and key fingerprint). */
function upstreamText(upstream) {
  if (!upstream) return 'not yet known (no call made)';
  if (upstream.kind === 'sandbox') return 'sandbox (simulated data, not real publications)';
  return `${upstream.baseUrl}, key ${upstream.keyFingerprint.slice(0, 8)}`;
}
/** The warning a view of sandbox data opens with. */
function SandboxBanner({ what }) {
  return html`<p class="notice sandbox" role="note"><strong>Sandbox data: not real publications.</strong> ${what} against opflow's built-in sandbox, which simulates the Open Platform; set OPFLOW_API_KEY to run against the platform.</p>`;
}
/** A small tag beside a job's title in tables. */
function SandboxTag({ job }) {
  return job.upstream?.kind === 'sandbox'
    ? html` <span class="tag sandbox" title="simulated data, not real publications">sandbox</span>`
    : null;
}

// ---- routing -------------------------------------------------------------------------------------

/** `#/` (jobs, filters in the query), `#/jobs/<id>`, `#/batches[/<id>]`, `#/schedules`, `#/webhooks`. */
function parseRoute(hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const at = raw.indexOf('?');
  const path = at < 0 ? raw : raw.slice(0, at);
  const query = new URLSearchParams(at < 0 ? '' : raw.slice(at + 1));
  const job = /^\/jobs\/([^/]+)$/.exec(path);
  if (job) return { page: 'job', id: decodeURIComponent(job[1]), query };
  const batch = /^\/batches\/([^/]+)$/.exec(path);
  if (batch) return { page: 'batch', id: decodeURIComponent(batch[1]), query };
  if (path === '/batches') return { page: 'batches', query };
  if (path === '/schedules') return { page: 'schedules', query };
  if (path === '/webhooks') return { page: 'webhooks', query };
  return { page: 'jobs', query };
}
function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
function jobsHash(filters) {
  return pageHash('/', filters, '', []);
}

/** The query of a list request or address: the filters that are set, and the page's cursor. */
function filterQuery(filters, cursor) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  if (cursor) query.set('cursor', cursor);
  return query;
}

/**
 * The hash of a page of a list (`/` the jobs, `/webhooks` the deliveries): the filters, the page's
 * cursor, and the cursors of the pages before it (`prev`, oldest first; empty for the first page),
 * so Previous goes back one page.
 */
function pageHash(path, filters, cursor, trail) {
  const query = filterQuery(filters, cursor);
  for (const earlier of trail) query.append('prev', earlier);
  const text = query.toString();
  return text ? `#${path}?${text}` : `#${path}`;
}

/** First, Previous and Next page links of a list whose address holds its cursors (pageHash). */
function Pager({ path, filters, cursor, trail, next }) {
  return html`<nav class="pager" aria-label="Pages">
    ${cursor ? html`<a href=${pageHash(path, filters, '', [])}>First page</a>` : null}
    ${
      cursor && trail.length > 0
        ? html`<a href=${pageHash(path, filters, trail[trail.length - 1], trail.slice(0, -1))} rel="prev">Previous page</a>`
        : null
    }
    ${next ? html`<a href=${pageHash(path, filters, next, [...trail, cursor])} rel="next">Next page</a>` : null}
  </nav>`;
}

/** Repeats `load` every `ms` while the tab is visible, and at once when it becomes visible again. */
function usePolling(load, ms, active) {
  const saved = useRef(load);
  saved.current = load;
  useEffect(() => {
    if (!active) return undefined;
    let timer;
    let stopped = false;
    const tick = async () => {
      if (document.visibilityState === 'visible') await saved.current().catch(() => {});
      if (!stopped) timer = setTimeout(tick, ms);
    };
    timer = setTimeout(tick, ms);
    const onVisible = () => {
      if (document.visibilityState === 'visible') saved.current().catch(() => {});
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [ms, active]);
}

/**
 * What `fetcher` answers, loaded now, again whenever `inputs` change, and every `ms` while
 * `active(data)` holds. A 401 goes to the sign-in form (createApi); other failures to `error`.
 */
function useLoaded(fetcher, inputs, ms, active = () => true) {
  const [data, setData] = useState(undefined);
  const [error, setError] = useState(undefined);
  const load = useCallback(async () => {
    try {
      setData(await fetcher());
      setError(undefined);
    } catch (failure) {
      if (failure.status !== 401) setError(failure.message);
    }
  }, inputs);
  useEffect(() => {
    load();
  }, [load]);
  usePolling(load, ms, Boolean(active(data)));
  return { data, error, load };
}

/**
 * A button's action: `run(work)` marks the page busy, shows what `work` answers (the text of a
 * notice) or why it failed, then reloads the page's data.
 */
function useAction(load) {
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState(undefined);
  const run = async (work) => {
    setBusy(true);
    try {
      setNotice({ ok: await work() });
      await load();
    } catch (failure) {
      setNotice({ error: failure.message });
    } finally {
      setBusy(false);
    }
  };
  return { busy, notice, setNotice, run };
}

/** Moves focus to the page's heading when the page changes, so screen readers announce it. */
function useFocusHeading(key) {
  const ref = useRef(null);
  useEffect(() => {
    ref.current?.focus();
  }, [key]);
  return ref;
}

// ---- shared pieces -------------------------------------------------------------------------------

function StatusBadge({ status }) {
  return html`<span class=${`status status-${status}`}>${status.replace('_', ' ')}</span>`;
}

function Notice({ error, ok }) {
  if (error) return html`<p class="notice error" role="alert">${error}</p>`;
  if (ok) return html`<p class="notice ok" role="status">${ok}</p>`;
  return null;
}

/** A page of one thing (a job, a batch) before it is loaded, or when it cannot be. */
function Pending({ back, backLabel, title, heading, error }) {
  return html`<main id="main">
    <p><a href=${back}>← ${backLabel}</a></p>
    <h1 tabindex="-1" ref=${heading}>${title}</h1>
    ${error ? html`<${Notice} error=${error} />` : html`<p aria-busy="true">Loading…</p>`}
  </main>`;
}

function TokenForm({ reason, onSaved }) {
  const [value, setValue] = useState('');
  const heading = useFocusHeading('token');
  const submit = (event) => {
    event.preventDefault();
    sessionStorage.setItem(tokenKey, value.trim());
    onSaved();
  };
  return html`<main id="main">
    <h1 tabindex="-1" ref=${heading}>Sign in to this opflow server</h1>
    <${Notice} error=${reason} />
    <form class="token" onSubmit=${submit}>
      <label for="token">Server token</label>
      <input id="token" type="password" autocomplete="current-password" required value=${value}
        onInput=${(event) => setValue(event.currentTarget.value)}
        aria-describedby="token-help" />
      <p id="token-help" class="muted small">
        The value of <code>OPFLOW_SERVE_TOKEN</code> on the machine that runs <code>opflow serve</code>
        (or your JWT for the AWS job API). It is kept in this browser tab only.
      </p>
      <div><button class="primary" type="submit">Sign in</button></div>
    </form>
  </main>`;
}

// ---- the jobs list -------------------------------------------------------------------------------

const filterNames = ['status', 'workflow', 'batchId', 'tenant', 'source', 'since', 'until', 'q'];

function readFilters(query) {
  const filters = {};
  for (const name of filterNames) filters[name] = query.get(name) ?? '';
  return filters;
}

function Filters({ config, filters, onChange }) {
  const [draft, setDraft] = useState(filters);
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const set = (name) => (event) => setDraft({ ...draft, [name]: event.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    onChange(draft);
  };
  const select = (name, label, values) => html`<label>
      ${label}
      <select name=${name} value=${draft[name]} onChange=${(event) => onChange({ ...draft, [name]: event.currentTarget.value })}>
        <option value="">any</option>
        ${values.map((value) => html`<option value=${value}>${value}</option>`)}
      </select>
    </label>`;
  return html`<form class="filters" role="search" aria-label="Filter jobs" onSubmit=${submit}>
    <label class="search">
      Search title and input text
      <input type="search" name="q" value=${draft.q} onInput=${set('q')} placeholder="e.g. helmet" />
    </label>
    ${select('status', 'Status', config.statuses)}
    ${select('workflow', 'Workflow', config.workflows)}
    ${select('source', 'Source', config.sources)}
    <label>Batch<input name="batchId" value=${draft.batchId} onInput=${set('batchId')} size="12" /></label>
    <label>Tenant<input name="tenant" value=${draft.tenant} onInput=${set('tenant')} size="10" /></label>
    <label>Created from<input type="date" name="since" value=${draft.since} onInput=${set('since')} /></label>
    <label>Created to<input type="date" name="until" value=${draft.until} onInput=${set('until')} /></label>
    <button type="submit">Apply</button>
    <button type="button" onClick=${() => onChange({})}>Clear</button>
  </form>`;
}

function BulkAnswer({ api, jobs, onDone, onOutcome }) {
  // The options every chosen job offers (by id), with the first job's labels.
  const offers = jobs.map((job) => job.pending).filter(Boolean);
  const common = offers.length
    ? offers[0].options.filter((option) =>
        offers.every((offer) => offer.options.some((o) => o.id === option.id)),
      )
    : [];
  const [chosen, setChosen] = useState(() => common.filter((option) => option.preselected).map((o) => o.id));
  const [busy, setBusy] = useState(false);
  if (offers.length === 0) return null;
  const toggle = (id) =>
    setChosen(chosen.includes(id) ? chosen.filter((value) => value !== id) : [...chosen, id]);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    const failures = [];
    for (const job of jobs) {
      try {
        await api('POST', `/jobs/${encodeURIComponent(job.id)}/selection`, { selected: chosen });
      } catch (error) {
        failures.push(`${jobTitle(job)}: ${error.message}`);
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
  return html`<section class="panel attention" aria-labelledby="bulk-heading">
    <h2 id="bulk-heading">Answer ${plural(offers.length, 'waiting job')} at once</h2>
    <p class="muted small">${offers[0].prompt} The same options go to every selected job.</p>
    ${
      common.length === 0
        ? html`<p>The selected jobs offer no option in common; answer them one by one.</p>`
        : html`<form onSubmit=${submit}>
          <fieldset class="options">
            <legend>Options offered by all of them</legend>
            ${common.map(
              (option) => html`<label>
                <input type="checkbox" checked=${chosen.includes(option.id)} onChange=${() => toggle(option.id)} />
                <span>${option.label}${option.detail ? html`<span class="detail">${option.detail}</span>` : null}</span>
              </label>`,
            )}
          </fieldset>
          <button class="primary" type="submit" disabled=${busy || chosen.length === 0}>
            Submit to ${plural(offers.length, 'job')}
          </button>
        </form>`
    }
  </section>`;
}

function JobsPage({ api, config, route }) {
  const filters = readFilters(route.query);
  const cursor = route.query.get('cursor') ?? '';
  const trail = route.query.getAll('prev');
  const [checked, setChecked] = useState([]);
  const [announcement, setAnnouncement] = useState('');
  const [outcome, setOutcome] = useState({});
  const previous = useRef(new Map());
  const heading = useFocusHeading('jobs');

  const {
    data: page,
    error,
    load,
  } = useLoaded(
    async () => {
      const query = filterQuery(filters, cursor);
      query.set('limit', '25');
      const answer = await api('GET', `/jobs?${query}`);
      // Tell screen readers about jobs on this page that changed status since the last look.
      const changes = [];
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
  );
  useEffect(() => setChecked([]), [load]);

  const go = (next) => {
    location.hash = jobsHash(next);
  };
  const jobs = page?.jobs ?? [];
  const waiting = jobs.filter((job) => job.status === 'AWAITING_INPUT');
  const chosenJobs = waiting.filter((job) => checked.includes(job.id));
  const toggle = (id) =>
    setChecked(checked.includes(id) ? checked.filter((v) => v !== id) : [...checked, id]);

  return html`<main id="main">
    <h1 tabindex="-1" ref=${heading}>Jobs</h1>
    <${Filters} config=${config} filters=${filters} onChange=${go} />
    <${Notice} error=${error} />
    <${Notice} ...${outcome} />
    <p class="visually-hidden" aria-live="polite">${announcement}</p>
    ${
      chosenJobs.length > 0
        ? html`<${BulkAnswer} key=${chosenJobs.map((j) => j.id).join()} api=${api} jobs=${chosenJobs} onOutcome=${setOutcome} onDone=${() => {
            setChecked([]);
            load();
          }} />`
        : null
    }
    ${
      page === undefined
        ? html`<p aria-busy="true">Loading jobs…</p>`
        : html`<table class="jobs">
          <caption>
            ${jobs.length === 0 ? 'No jobs match.' : `${plural(jobs.length, 'job')} on this page, newest first; the list updates itself.`}
            ${waiting.length > 0 ? ' Tick waiting jobs to answer their selection together.' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col"><span class="visually-hidden">Select</span></th>
              <th scope="col">Job</th>
              <th scope="col">Workflow</th>
              <th scope="col">Status</th>
              <th scope="col">Step</th>
              <th scope="col">Tenant</th>
              <th scope="col">Source</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            ${jobs.map(
              (job) => html`<tr key=${job.id} data-job=${job.id} data-status=${job.status}>
                <td>
                  ${
                    job.status === 'AWAITING_INPUT'
                      ? html`<input type="checkbox" aria-label=${`Select ${jobTitle(job)} to answer`}
                          checked=${checked.includes(job.id)} onChange=${() => toggle(job.id)} />`
                      : null
                  }
                </td>
                <td>
                  <a href=${`#/jobs/${encodeURIComponent(job.id)}`}>${jobTitle(job)}</a><${SandboxTag} job=${job} />
                  ${job.label && job.label !== jobTitle(job) ? html`<div class="small muted">${job.label}</div>` : null}
                  ${job.lastError ? html`<div class="small muted">${job.lastError.message}</div>` : null}
                  ${job.batchId ? html`<div class="small muted">batch ${job.batchId}</div>` : null}
                </td>
                <td>${job.workflow}</td>
                <td><${StatusBadge} status=${job.status} /></td>
                <td>${job.step}</td>
                <td>${job.tenant}</td>
                <td>${job.source}</td>
                <td><time datetime=${toDate(job.createdAt)?.toISOString()}>${formatTime(job.createdAt)}</time></td>
                <td><time datetime=${toDate(job.updatedAt)?.toISOString()}>${formatTime(job.updatedAt)}</time></td>
              </tr>`,
            )}
          </tbody>
        </table>`
    }
    <${Pager} path="/" filters=${filters} cursor=${cursor} trail=${trail} next=${page?.cursor} />
  </main>`;
}

// ---- one job -------------------------------------------------------------------------------------

function SelectionForm({ api, job, onAnswered }) {
  const pending = job.pending;
  const [chosen, setChosen] = useState(() => pending.options.filter((o) => o.preselected).map((o) => o.id));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(undefined);
  const toggle = (id) =>
    setChosen(chosen.includes(id) ? chosen.filter((value) => value !== id) : [...chosen, id]);
  const valid = chosen.length >= pending.min && chosen.length <= pending.max;
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await api('POST', `/jobs/${encodeURIComponent(job.id)}/selection`, { selected: chosen });
      setError(undefined);
      onAnswered('Selection sent; the job goes on.');
    } catch (failure) {
      setError(failure.message);
    } finally {
      setBusy(false);
    }
  };
  const range = pending.min === pending.max ? `${pending.min}` : `${pending.min} to ${pending.max}`;
  return html`<section class="panel attention" aria-labelledby="selection-heading">
    <h2 id="selection-heading">Waiting for your selection</h2>
    <form onSubmit=${submit}>
      <fieldset class="options" aria-describedby="selection-rule">
        <legend>${pending.prompt}</legend>
        <p id="selection-rule" class="muted small">Choose ${range} of ${plural(pending.options.length, 'option')}; ${chosen.length} chosen.</p>
        ${pending.options.map(
          (option) => html`<label>
            <input type="checkbox" name="option" value=${option.id} checked=${chosen.includes(option.id)}
              onChange=${() => toggle(option.id)} />
            <span>${option.label} <span class="muted small">(${option.id})</span>
              ${option.detail ? html`<span class="detail">${option.detail}</span>` : null}</span>
          </label>`,
        )}
      </fieldset>
      <button class="primary" type="submit" disabled=${busy || !valid}>Submit selection</button>
    </form>
    <${Notice} error=${error} />
  </section>`;
}

function ErrorFacts({ error }) {
  return html`<dl class="facts">
    <dt>Message</dt><dd>${error.message}</dd>
    <dt>Kind</dt><dd>${error.kind}${error.retryable ? ' (retryable)' : ''}</dd>
    ${error.step ? html`<dt>Step</dt><dd>${error.step}</dd>` : null}
    ${error.operationId ? html`<dt>Operation</dt><dd>${error.operationId}</dd>` : null}
    ${error.code !== undefined ? html`<dt>Code</dt><dd>${error.code}</dd>` : null}
    ${error.httpStatus !== undefined ? html`<dt>HTTP status</dt><dd>${error.httpStatus}</dd>` : null}
    ${error.correlationId ? html`<dt>Correlation id</dt><dd><code>${error.correlationId}</code></dd>` : null}
    ${error.at ? html`<dt>At</dt><dd>${formatTime(error.at)}</dd>` : null}
  </dl>`;
}

/** The figures of one step on the timeline, as one line of text. */
function stepFigures(step) {
  const parts = [formatTime(step.startedAt)];
  if (step.durationMs !== undefined) parts.push(`took ${formatDuration(step.durationMs)}`);
  parts.push(
    `${plural(step.calls ?? 0, 'call')}${step.callMs ? ` (${formatDuration(step.callMs)} in calls)` : ''}`,
  );
  if (step.retries) parts.push(step.retries === 1 ? '1 retry' : `${step.retries} retries`);
  if (step.polls) parts.push(plural(step.polls, 'poll'));
  if (step.billedUnits) parts.push(`${step.billedUnits} billed units`);
  if (step.throttled) parts.push(`${step.throttled} throttled`);
  return parts.join(' · ');
}

function errorLine(error) {
  const code = error.code !== undefined ? ` ${error.code}` : '';
  const http = error.httpStatus ? ` (HTTP ${error.httpStatus})` : '';
  return `${error.kind}${code}${http}: ${error.message}`;
}

function Timeline({ timeline }) {
  if (!timeline) return null;
  return html`<ol class="timeline" aria-label="Steps">
    ${timeline.steps.map(
      (step) => html`<li class=${step.state} key=${step.name}>
        <span class="step-name">${step.title ?? step.name}</span>
        <span class="muted small">${` ${step.operation ?? ''} · ${step.state}`}</span>
        ${step.startedAt ? html`<div class="figures">${stepFigures(step)}</div>` : null}
        ${
          step.errors?.length
            ? html`<ul class="errors">
              ${step.errors.map(
                (error) => html`<li>
                  ${errorLine(error)}
                  ${error.correlationId ? html`${' · correlation id '}<code>${error.correlationId}</code>` : null}
                  ${` · ${formatTime(error.at)}`}
                </li>`,
              )}
            </ul>`
            : null
        }
      </li>`,
    )}
  </ol>`;
}

/** Saves a file the API serves (with the token), or opens a presigned link. */
async function downloadFile(config, file) {
  if (!file.href) {
    open(file.url, '_blank', 'noopener');
    return;
  }
  const token = sessionStorage.getItem(tokenKey);
  const response = await fetch(`${config.apiBase.replace(/\/+$/, '')}${file.href}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!response.ok) throw new Error(`the server answered ${response.status}`);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = file.name.split('/').pop();
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function Report({ api, config, job }) {
  const [files, setFiles] = useState(undefined);
  const [reportHtml, setReportHtml] = useState(undefined);
  const [error, setError] = useState(undefined);
  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const answer = await api('GET', `/jobs/${encodeURIComponent(job.id)}/report`);
        if (!live) return;
        setFiles(answer.files);
        const page = answer.files.find((file) => file.name === 'report.html');
        if (page?.href) {
          const text = await api('GET', page.href);
          if (live) setReportHtml({ srcdoc: text });
        } else if (page?.url) setReportHtml({ src: page.url });
      } catch (failure) {
        if (live) setError(failure.message);
      }
    })();
    return () => {
      live = false;
    };
  }, [job.id]);

  const download = (file) =>
    downloadFile(config, file).catch((failure) =>
      setError(`could not download ${file.name}: ${failure.message}`),
    );

  const attachments = (files ?? []).filter((file) => file.name.startsWith('attachments/'));
  const others = (files ?? []).filter((file) => !file.name.startsWith('attachments/'));
  return html`<section aria-labelledby="report-heading">
    <h2 id="report-heading">Report</h2>
    <${Notice} error=${error} />
    ${
      reportHtml
        ? html`<iframe class="report" title=${`Report of ${jobTitle(job)}`} sandbox="" ...${reportHtml}></iframe>`
        : files === undefined && !error
          ? html`<p aria-busy="true">Loading the report…</p>`
          : null
    }
    ${
      files
        ? html`<div class="grid2">
          <div>
            <h3>Files</h3>
            <ul>${others.map((file) => html`<li><button type="button" onClick=${() => download(file)}>Download ${file.name}</button></li>`)}</ul>
          </div>
          <div>
            <h3>Attachments</h3>
            ${
              attachments.length
                ? html`<ul>${attachments.map((file) => html`<li><button type="button" onClick=${() => download(file)}>Download ${file.name.slice('attachments/'.length)}</button></li>`)}</ul>`
                : html`<p class="muted">None.</p>`
            }
          </div>
        </div>`
        : null
    }
  </section>`;
}

/** Whether the job's callback is still to be sent or retried. */
function callbackPending(job) {
  return Boolean(job.callbackUrl) && (job.callback === undefined || job.callback.state === 'pending');
}

/** The job's callback (`callbackUrl`): the delivery's state and every attempt. */
function Callback({ job }) {
  const callback = job.callback;
  const ended = !unfinished.includes(job.status);
  return html`<section aria-labelledby="callback-heading">
    <h2 id="callback-heading">Callback</h2>
    <dl class="facts">
      <dt>URL</dt><dd><code>${job.callbackUrl}</code></dd>
      <dt>Delivery</dt><dd>${callback ? `${callback.state} (round ${callback.round})` : ended ? 'being sent' : 'when the job ends'}</dd>
      ${callback?.deliveredAt ? html`<dt>Delivered</dt><dd>${formatTime(callback.deliveredAt)}</dd>` : null}
      ${callback?.nextAttemptAt && callback.state === 'pending' ? html`<dt>Next attempt</dt><dd>${formatTime(callback.nextAttemptAt)}</dd>` : null}
    </dl>
    ${
      callback?.attempts?.length
        ? html`<table class="jobs">
          <caption>${plural(callback.attempts.length, 'attempt')}</caption>
          <thead><tr><th scope="col">Round</th><th scope="col">At</th><th scope="col">Answer</th><th scope="col">Took</th></tr></thead>
          <tbody>
            ${callback.attempts.map(
              (attempt) => html`<tr>
                <td>${attempt.round}</td>
                <td>${formatTime(attempt.at)}</td>
                <td>${attempt.status !== undefined ? `HTTP ${attempt.status}` : (attempt.error ?? '')}</td>
                <td>${formatDuration(attempt.durationMs)}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
        : null
    }
  </section>`;
}

function JobPage({ api, config, id }) {
  const heading = useFocusHeading(id);
  const { data, error, load } = useLoaded(
    async () => {
      const { job } = await api('GET', `/jobs/${encodeURIComponent(id)}`);
      const timeline = config.timeline
        ? await api('GET', `/jobs/${encodeURIComponent(id)}/timeline`).catch(() => undefined)
        : undefined;
      return { job, timeline };
    },
    [api, id],
    jobRefreshMs,
    // While it runs, and while its callback is still to be delivered (attempts show as they come).
    (loaded) => loaded && (unfinished.includes(loaded.job.status) || callbackPending(loaded.job)),
  );
  const { busy, notice, setNotice, run } = useAction(load);
  const job = data?.job;
  const timeline = data?.timeline;
  const running = job !== undefined && unfinished.includes(job.status);

  const act = (label, method, path, body) =>
    run(async () => {
      await api(method, path, body);
      return label;
    });
  const cancel = () => {
    if (!confirm(`Cancel ${jobTitle(job)}? A call under way finishes, but its result is dropped.`)) return;
    act('Job cancelled.', 'POST', `/jobs/${encodeURIComponent(id)}/cancel`);
  };
  const retry = (fromStart) =>
    act(
      fromStart ? 'Job restarted from its first step.' : 'Job retried from the step it stopped at.',
      'POST',
      `/jobs/${encodeURIComponent(id)}/retry`,
      { fromStart },
    );

  if (job === undefined) {
    return html`<${Pending} back="#/" backLabel="All jobs" title=${`Job ${id}`} heading=${heading} error=${error} />`;
  }
  const usage = job.usage ?? {};
  const canRetry = job.status === 'FAILED' || job.status === 'CANCELLED';
  return html`<main id="main">
    <p><a href="#/">← All jobs</a></p>
    <h1 tabindex="-1" ref=${heading}>${jobTitle(job)} <${StatusBadge} status=${job.status} /></h1>
    ${job.upstream?.kind === 'sandbox' ? html`<${SandboxBanner} what="This job ran" />` : null}
    <p class="visually-hidden" aria-live="polite">Status ${job.status}, step ${job.step}</p>
    <div class="actions">
      ${running ? html`<button class="danger" type="button" disabled=${busy} onClick=${cancel}>Cancel job</button>` : null}
      ${canRetry ? html`<button class="primary" type="button" disabled=${busy} onClick=${() => retry(false)}>Retry from ${job.lastError?.step ?? job.step}</button>` : null}
      ${canRetry ? html`<button type="button" disabled=${busy} onClick=${() => retry(true)}>Retry from the start</button>` : null}
    </div>
    <${Notice} ...${notice ?? {}} />
    <${Notice} error=${error} />
    ${
      job.status === 'AWAITING_INPUT' && job.pending
        ? html`<${SelectionForm} key=${job.version} api=${api} job=${job} onAnswered=${(text) => {
            setNotice({ ok: text });
            load();
          }} />`
        : null
    }
    ${
      job.lastError
        ? html`<section class=${`panel ${job.status === 'FAILED' ? 'error' : ''}`} aria-labelledby="error-heading">
          <h2 id="error-heading">${job.status === 'FAILED' ? 'Why it failed' : 'Last error (retried)'}</h2>
          <${ErrorFacts} error=${job.lastError} />
        </section>`
        : null
    }
    <div class="grid2">
      <section aria-labelledby="facts-heading">
        <h2 id="facts-heading">Job</h2>
        <dl class="facts">
          <dt>Id</dt><dd><code class="id">${job.id}</code></dd>
          ${job.label ? html`<dt>Label</dt><dd>${job.label}</dd>` : null}
          <dt>Workflow</dt><dd>${job.workflow}</dd>
          <dt>Status</dt><dd>${job.status}</dd>
          <dt>Current step</dt><dd>${job.step}</dd>
          <dt>Tenant</dt><dd>${job.tenant}</dd>
          <dt>Upstream</dt><dd>${upstreamText(job.upstream)}</dd>
          <dt>Source</dt><dd>${job.source}</dd>
          ${job.batchId ? html`<dt>Batch</dt><dd><a href=${config.batches ? `#/batches/${encodeURIComponent(job.batchId)}` : jobsHash({ batchId: job.batchId })}>${job.batchId}</a></dd>` : null}
          <dt>Selection</dt><dd>${job.selection?.mode}</dd>
          <dt>Created</dt><dd>${formatTime(job.createdAt)}</dd>
          <dt>Updated</dt><dd>${formatTime(job.updatedAt)}</dd>
          ${job.finishedAt ? html`<dt>Finished</dt><dd>${formatTime(job.finishedAt)}</dd>` : null}
          <dt>Deadline</dt><dd>${formatTime(job.deadlineAt)}</dd>
          ${job.runs?.length ? html`<dt>Runs</dt><dd>${job.runs.length + 1} (retried ${plural(job.runs.length, 'time')})</dd>` : null}
        </dl>
      </section>
      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Usage</h2>
        <dl class="facts">
          <dt>Calls</dt><dd>${usage.calls ?? 0} (${usage.failedCalls ?? 0} failed, ${usage.throttledCalls ?? 0} throttled)</dd>
          <dt>Billed units</dt><dd>${usage.billedUnits ?? 0}</dd>
          <dt>Tokens</dt><dd>${usage.tokens ?? 0}</dd>
          <dt>Time in calls</dt><dd>${formatDuration(usage.callMs ?? 0)}</dd>
          <dt>Repeated creates</dt><dd>${usage.duplicateCreates ?? 0}</dd>
          <dt>Attempts / polls (current step)</dt><dd>${job.attempts ?? 0} / ${job.polls ?? 0}</dd>
        </dl>
      </section>
    </div>
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      ${timeline ? html`<${Timeline} timeline=${timeline} />` : html`<p class="muted">At step <strong>${job.step}</strong>.</p>`}
    </section>
    ${
      job.runs?.length
        ? html`<section aria-labelledby="runs-heading">
          <h2 id="runs-heading">Earlier runs</h2>
          <ol>${job.runs.map((run) => html`<li>${run.status} at ${run.step}${run.error ? `: ${run.error.message}` : ''}; retried ${formatTime(run.retriedAt)} from ${run.retriedFrom}</li>`)}</ol>
        </section>`
        : null
    }
    ${job.callbackUrl ? html`<${Callback} job=${job} />` : null}
    ${job.status === 'SUCCEEDED' ? html`<${Report} api=${api} config=${config} job=${job} />` : null}
  </main>`;
}

// ---- batches -------------------------------------------------------------------------------------

function BatchesPage({ api }) {
  const heading = useFocusHeading('batches');
  const { data: page, error } = useLoaded(() => api('GET', '/batches?limit=50'), [api], listRefreshMs);
  const batches = page?.batches ?? [];
  return html`<main id="main">
    <h1 tabindex="-1" ref=${heading}>Batches</h1>
    <${Notice} error=${error} />
    ${
      page === undefined
        ? html`<p aria-busy="true">Loading batches…</p>`
        : html`<table class="jobs">
          <caption>${batches.length === 0 ? 'No batches yet: opflow ingest <manifest or folder> --workflow <name> starts one.' : `${plural(batches.length, 'batch', 'batches')}, newest first; updates live.`}</caption>
          <thead><tr>
            <th scope="col">Batch</th><th scope="col">Status</th><th scope="col">Workflow</th><th scope="col">Items</th>
            <th scope="col">Succeeded</th><th scope="col">Failed</th><th scope="col">Waiting or running</th><th scope="col">ETA</th><th scope="col">Created</th>
          </tr></thead>
          <tbody>
            ${batches.map(
              (batch) => html`<tr key=${batch.id} data-batch=${batch.id} data-status=${batch.status}>
                <td><a href=${`#/batches/${encodeURIComponent(batch.id)}`}>${batch.name}</a></td>
                <td><${StatusBadge} status=${batch.status} /></td>
                <td>${batch.workflow}</td>
                <td>${batch.items}</td>
                <td>${batch.totals.succeeded}</td>
                <td>${batch.totals.failed + batch.totals.cancelled}</td>
                <td>${batch.totals.waiting + batch.totals.running}</td>
                <td>${batch.etaMs !== undefined ? formatDuration(batch.etaMs) : ''}</td>
                <td>${formatTime(batch.createdAt)}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
    }
  </main>`;
}

function BatchPage({ api, config, id }) {
  const heading = useFocusHeading(`batch-${id}`);
  const path = `/batches/${encodeURIComponent(id)}`;
  const { data, error, load } = useLoaded(
    async () => ({
      answer: await api('GET', path),
      jobs: await api('GET', `/jobs?batchId=${encodeURIComponent(id)}&limit=100`),
    }),
    [api, id],
    listRefreshMs,
    (loaded) =>
      loaded && (loaded.answer.batch.status !== 'FINISHED' || loaded.answer.batch.totals.running > 0),
  );
  const { busy, notice, run } = useAction(load);
  const answer = data?.answer;
  const jobs = data?.jobs;
  const batch = answer?.batch;
  const active = batch !== undefined && batch.status !== 'FINISHED';
  // A stopped batch starts nothing more: Cancel all is left for the jobs it still runs.
  const cancellable = active && (batch.status !== 'STOPPED' || batch.totals.running > 0);
  const act = (label, action) =>
    run(async () => {
      const outcome = await api('POST', `${path}/${action}`);
      return action === 'redrive'
        ? `${label}: ${plural(outcome.retried, 'item')} running again${outcome.refused.length ? `; ${outcome.refused.length} could not be` : ''}.`
        : `${label}: ${plural(outcome.cancelled, 'job')} cancelled; no new items start.`;
    });
  if (batch === undefined) {
    return html`<${Pending} back="#/batches" backLabel="All batches" title=${`Batch ${id}`} heading=${heading} error=${error} />`;
  }
  const t = batch.totals;
  const done = t.succeeded + t.failed + t.cancelled;
  const failures = t.failed + t.cancelled;
  const files = ['index.html', 'summary.csv', 'results.jsonl', 'failed.jsonl'];
  return html`<main id="main">
    <p><a href="#/batches">← All batches</a></p>
    <h1 tabindex="-1" ref=${heading}>${batch.name} <${StatusBadge} status=${batch.status} /></h1>
    ${batch.reason ? html`<p class="notice error">${batch.reason}</p>` : null}
    ${jobs?.jobs.some((job) => job.upstream?.kind === 'sandbox') ? html`<${SandboxBanner} what=${`${plural(jobs.jobs.filter((job) => job.upstream?.kind === 'sandbox').length, 'job')} of this batch ran`} />` : null}
    <div class="actions">
      ${failures > 0 ? html`<button class="primary" type="button" disabled=${busy} onClick=${() => act('Redrive', 'redrive')}>Redrive ${plural(failures, 'failed item')}</button>` : null}
      ${
        cancellable
          ? html`<button class="danger" type="button" disabled=${busy} onClick=${() => {
              if (
                confirm(
                  `Cancel batch ${batch.name}? No new items start and its unfinished jobs are cancelled.`,
                )
              )
                act('Cancelled', 'cancel');
            }}>Cancel all</button>`
          : null
      }
    </div>
    <${Notice} ...${notice ?? {}} />
    <${Notice} error=${error} />
    <section aria-labelledby="progress-heading">
      <h2 id="progress-heading">Progress</h2>
      <p>
        <label for="batch-progress">${done} of ${plural(batch.items, 'item')} finished</label>
        <progress id="batch-progress" max=${Math.max(1, batch.items)} value=${done}>${done} of ${batch.items}</progress>
      </p>
      <div class="grid2">
        <dl class="facts">
          <dt>Succeeded</dt><dd>${t.succeeded}</dd>
          <dt>Failed</dt><dd>${t.failed}</dd>
          <dt>Cancelled</dt><dd>${t.cancelled}</dd>
          <dt>Running</dt><dd>${t.running}</dd>
          <dt>Waiting to start</dt><dd>${t.waiting}</dd>
          <dt>Bad lines</dt><dd>${answer.problemCount}</dd>
        </dl>
        <dl class="facts">
          <dt>Workflow</dt><dd>${batch.workflow}</dd>
          <dt>Source</dt><dd><code>${batch.source}</code></dd>
          <dt>Run</dt><dd>${batch.run}: ${batch.thisRun.records} records read${batch.thisRun.readingDone ? '' : ' so far'}, ${batch.thisRun.created} new, ${batch.thisRun.existing} seen before</dd>
          <dt>Calls / billed units</dt><dd>${batch.calls} / ${batch.billedUnits}</dd>
          <dt>Elapsed</dt><dd>${formatDuration(batch.elapsedMs)}</dd>
          <dt>ETA</dt><dd>${batch.etaMs !== undefined ? formatDuration(batch.etaMs) : active && batch.status !== 'STOPPED' ? 'after a few items finish' : '—'}</dd>
        </dl>
      </div>
    </section>
    <section aria-labelledby="outputs-heading">
      <h2 id="outputs-heading">Summary files</h2>
      <div class="actions">
        ${files.map(
          (name) =>
            html`<button type="button" onClick=${() =>
              run(async () => {
                await downloadFile(config, { name, href: `${path}/outputs/${name}` });
                return `${name} downloaded.`;
              })}>Download ${name}</button>`,
        )}
      </div>
    </section>
    ${
      answer.problems.length
        ? html`<section aria-labelledby="problems-heading">
          <h2 id="problems-heading">Lines that could not be used</h2>
          <table class="jobs">
            <caption>${plural(answer.problemCount, 'problem')} in run ${batch.run}</caption>
            <thead><tr><th scope="col">Where</th><th scope="col">Id</th><th scope="col">Why</th></tr></thead>
            <tbody>${answer.problems.map((problem) => html`<tr><td>${problem.position}</td><td>${problem.id ?? ''}</td><td>${problem.reason}</td></tr>`)}</tbody>
          </table>
        </section>`
        : null
    }
    <section aria-labelledby="batch-jobs-heading">
      <h2 id="batch-jobs-heading">Jobs</h2>
      ${
        jobs
          ? html`<table class="jobs">
            <caption>${plural(jobs.jobs.length, 'job')}${jobs.cursor ? html` shown; <a href=${jobsHash({ batchId: id })}>all of them</a>` : ''}</caption>
            <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Step</th><th scope="col">Calls</th><th scope="col">Billed units</th><th scope="col">Updated</th></tr></thead>
            <tbody>${jobs.jobs.map(
              (job) => html`<tr key=${job.id} data-job=${job.id} data-status=${job.status}>
                <td><a href=${`#/jobs/${encodeURIComponent(job.id)}`}>${jobTitle(job)}</a><${SandboxTag} job=${job} />${job.lastError ? html`<div class="small muted">${job.lastError.message}</div>` : null}</td>
                <td><${StatusBadge} status=${job.status} /></td>
                <td>${job.step}</td>
                <td>${job.usage?.calls ?? 0}</td>
                <td>${job.usage?.billedUnits ?? 0}</td>
                <td>${formatTime(job.updatedAt)}</td>
              </tr>`,
            )}</tbody>
          </table>`
          : null
      }
    </section>
  </main>`;
}

/** A schedule's row: its slots, its state, its last fire and job, and what can be done to it. */
function ScheduleRow({ schedule, busy, pausing, onTrigger, onPause, onResume }) {
  return html`<tr data-schedule=${schedule.name} data-state=${schedule.pause ? 'paused' : 'active'}>
    <td class="nowrap">${schedule.name}</td>
    <td class="nowrap"><code>${schedule.cron}</code> <span class="muted small">${schedule.timezone}</span></td>
    <td class="nowrap">${schedule.workflow}</td>
    <td>${
      schedule.pause
        ? html`<${StatusBadge} status="PAUSED" /> ${schedule.pause.reason}
          <div class="small muted">${schedule.pause.by === 'config' ? 'in opflow.config.json' : `since ${formatTime(schedule.pause.at)}`}</div>`
        : html`<${StatusBadge} status="ACTIVE" />`
    }</td>
    <td>${schedule.next ? html`<time datetime=${schedule.next}>${formatTime(schedule.next)}</time>` : 'none while paused'}</td>
    <td>${schedule.lastFired ? html`<time datetime=${schedule.lastFired}>${formatTime(schedule.lastFired)}</time>` : 'never'}</td>
    <td>${schedule.lastJob ? html`<a href=${`#/jobs/${encodeURIComponent(schedule.lastJob.id)}`}>${schedule.lastJob.status}</a>` : ''}</td>
    <td>${schedule.skipped}</td>
    <td class="row-actions">
      <button type="button" disabled=${busy} onClick=${() => onTrigger(schedule.name)} aria-label=${`Trigger now: ${schedule.name}`}>Trigger now</button>
      ${
        schedule.pause === undefined
          ? html`<button type="button" disabled=${busy} aria-label=${`Pause: ${schedule.name}`} aria-expanded=${pausing === schedule.name ? 'true' : 'false'}
              onClick=${() => onPause(schedule.name)}>Pause…</button>`
          : schedule.pause.by === 'runtime'
            ? html`<button type="button" class="primary" disabled=${busy} aria-label=${`Resume: ${schedule.name}`} onClick=${() => onResume(schedule.name)}>Resume</button>`
            : null
      }
    </td>
  </tr>`;
}

function SchedulesPage({ api }) {
  const heading = useFocusHeading('schedules');
  const { data: answer, error, load } = useLoaded(() => api('GET', '/schedules'), [api], 5000);
  const { busy, notice, run } = useAction(load);
  // The schedule whose pause form is open, and the reason typed in it.
  const [pausing, setPausing] = useState(undefined);
  const [reason, setReason] = useState('');
  const reasonField = useRef(null);
  useEffect(() => {
    if (pausing) reasonField.current?.focus();
  }, [pausing]);
  // After a pause or resume (or closing the form), the focus goes back to the schedule's row: to
  // the button that undoes what was done, once the page shows it.
  const [returnTo, setReturnTo] = useState(undefined);
  useEffect(() => {
    if (!returnTo || busy) return;
    const button = document.querySelector(
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
  const path = (name, action) => `/schedules/${encodeURIComponent(name)}/${action}`;
  const trigger = (name) =>
    run(async () => {
      const outcome = await api('POST', path(name, 'trigger'));
      return `${name}: job ${outcome.jobId} started.`;
    });
  const pause = (event) => {
    event.preventDefault();
    const name = pausing;
    run(async () => {
      await api('POST', path(name, 'pause'), { reason });
      closeForm();
      setReason('');
      return `${name} paused: its slots are skipped until it is resumed.`;
    });
  };
  const resume = (name) =>
    run(async () => {
      const outcome = await api('POST', path(name, 'resume'));
      setReturnTo(name);
      return `${name} resumed: next fire ${formatTime(outcome.schedule.next)}.`;
    });
  const schedules = answer?.schedules ?? [];
  return html`<main id="main">
    <h1 tabindex="-1" ref=${heading}>Schedules</h1>
    <p class="muted small">
      Declared in opflow.config.json and fired by this server (on AWS, by EventBridge Scheduler). A pause
      set here holds for every process until it is resumed; a pause written in the file (<code>"paused": {"reason": "..."}</code>)
      is lifted only there.
    </p>
    <${Notice} ...${notice ?? {}} />
    <${Notice} error=${error} />
    ${
      pausing
        ? html`<section class="panel attention" aria-labelledby="pause-heading">
          <h2 id="pause-heading">Pause ${pausing}</h2>
          <form onSubmit=${pause}>
            <p class="field">
              <label for="pause-reason">Why (shown beside the schedule)</label>
              <input id="pause-reason" ref=${reasonField} required maxlength="500" size="50" value=${reason}
                onInput=${(event) => setReason(event.currentTarget.value)} />
            </p>
            <div class="actions">
              <button class="primary" type="submit" disabled=${busy || reason.trim() === ''}>Pause ${pausing}</button>
              <button type="button" onClick=${closeForm}>Keep it running</button>
            </div>
          </form>
        </section>`
        : null
    }
    ${
      answer === undefined
        ? html`<p aria-busy="true">Loading schedules…</p>`
        : html`<table class="jobs">
          <caption>${schedules.length === 0 ? 'No schedules: declare them under "schedules" in opflow.config.json.' : plural(schedules.length, 'schedule')}</caption>
          <thead><tr>
            <th scope="col">Schedule</th><th scope="col">When</th><th scope="col">Workflow</th><th scope="col">State</th>
            <th scope="col">Next fire</th><th scope="col">Last fire</th><th scope="col">Last job</th><th scope="col">Skipped slots</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr></thead>
          <tbody>
            ${schedules.map(
              (
                schedule,
              ) => html`<${ScheduleRow} key=${schedule.name} schedule=${schedule} busy=${busy} pausing=${pausing}
                onTrigger=${trigger} onPause=${setPausing} onResume=${resume} />`,
            )}
          </tbody>
        </table>`
    }
  </main>`;
}

// ---- webhooks ------------------------------------------------------------------------------------

/** What a delivery came to, in words. */
function deliveryOutcome(delivery) {
  if (delivery.error) return `${delivery.error.code}: ${delivery.error.message}`;
  if (delivery.jobId) return delivery.created === false ? 'repeated delivery: the same job' : 'job started';
  return '';
}

function DeliveryRow({ delivery }) {
  const answer = delivery.status < 300 ? 'status-SUCCEEDED' : 'status-FAILED';
  const job = delivery.jobId;
  return html`<tr data-delivery=${delivery.id} data-answer=${delivery.status}>
    <td><time datetime=${delivery.at}>${formatTime(delivery.at)}</time></td>
    <td>${delivery.source}</td>
    <td>${delivery.webhookId ? html`<code>${delivery.webhookId}</code>` : ''}</td>
    <td><span class=${`status ${answer}`}>HTTP ${delivery.status}</span></td>
    <td>${deliveryOutcome(delivery)}</td>
    <td>${job ? html`<a href=${`#/jobs/${encodeURIComponent(job)}`}><code class="id">${job}</code></a>` : ''}</td>
  </tr>`;
}

function WebhooksPage({ api, route }) {
  const source = route.query.get('source') ?? '';
  const cursor = route.query.get('cursor') ?? '';
  const trail = route.query.getAll('prev');
  const heading = useFocusHeading('webhooks');
  const [draft, setDraft] = useState(source);
  useEffect(() => setDraft(source), [source]);
  const { data: page, error } = useLoaded(
    () => {
      const query = filterQuery({ source }, cursor);
      query.set('limit', '50');
      return api('GET', `/webhook-deliveries?${query}`);
    },
    [api, source, cursor],
    listRefreshMs,
  );
  const filter = (event) => {
    event.preventDefault();
    location.hash = pageHash('/webhooks', { source: draft.trim() }, '', []);
  };
  const deliveries = page?.deliveries ?? [];
  return html`<main id="main">
    <h1 tabindex="-1" ref=${heading}>Webhook deliveries</h1>
    <p class="muted small">
      Every request to <code>POST /webhooks/{source}</code> of a source with a signing secret, whatever it was
      answered, newest first (kept 30 days). A job's own outgoing callback shows on the job's page.
    </p>
    <form class="filters" role="search" aria-label="Filter deliveries" onSubmit=${filter}>
      <label>Source<input name="source" value=${draft} size="16" onInput=${(event) => setDraft(event.currentTarget.value)} /></label>
      <button type="submit">Apply</button>
      <button type="button" onClick=${() => {
        location.hash = '#/webhooks';
      }}>Clear</button>
    </form>
    <${Notice} error=${error} />
    ${
      page === undefined
        ? html`<p aria-busy="true">Loading deliveries…</p>`
        : html`<table class="jobs">
          <caption>${deliveries.length === 0 ? 'No deliveries recorded.' : `${plural(deliveries.length, 'delivery', 'deliveries')} on this page, newest first; the list updates itself.`}</caption>
          <thead><tr>
            <th scope="col">Received</th><th scope="col">Source</th><th scope="col">Webhook id</th>
            <th scope="col">Answer</th><th scope="col">Outcome</th><th scope="col">Job</th>
          </tr></thead>
          <tbody>
            ${deliveries.map((delivery) => html`<${DeliveryRow} key=${delivery.id} delivery=${delivery} />`)}
          </tbody>
        </table>`
    }
    <${Pager} path="/webhooks" filters=${{ source }} cursor=${cursor} trail=${trail} next=${page?.cursor} />
  </main>`;
}

// ---- the app -------------------------------------------------------------------------------------

/** The page the address names. */
function Page({ api, config, route }) {
  switch (route.page) {
    case 'job':
      return html`<${JobPage} api=${api} config=${config} id=${route.id} />`;
    case 'batches':
      return html`<${BatchesPage} api=${api} />`;
    case 'batch':
      return html`<${BatchPage} api=${api} config=${config} id=${route.id} />`;
    case 'schedules':
      return html`<${SchedulesPage} api=${api} />`;
    case 'webhooks':
      return html`<${WebhooksPage} api=${api} route=${route} />`;
    default:
      return html`<${JobsPage} api=${api} config=${config} route=${route} />`;
  }
}

/** The main navigation: each list page, shown when the API behind the page serves it. */
const sections = [
  { page: 'jobs', href: '#/', label: 'Jobs', on: () => true },
  { page: 'batches', href: '#/batches', label: 'Batches', on: (config) => config.batches },
  { page: 'schedules', href: '#/schedules', label: 'Schedules', on: (config) => config.schedules },
  { page: 'webhooks', href: '#/webhooks', label: 'Webhooks', on: (config) => config.webhooks },
];

function App({ config }) {
  const route = useRoute();
  const [signIn, setSignIn] = useState(undefined);
  const [generation, setGeneration] = useState(0);
  const api = useMemo(
    () =>
      createApi(config, (error) =>
        setSignIn(
          sessionStorage.getItem(tokenKey)
            ? `The token was refused: ${error.message}`
            : 'This server needs its token.',
        ),
      ),
    [config],
  );
  const signedIn = Boolean(sessionStorage.getItem(tokenKey));
  const signOut = () => {
    sessionStorage.removeItem(tokenKey);
    setGeneration(generation + 1);
  };
  return html`<div>
    <header class="top">
      <a class="brand" href="#/">opflow</a>
      <nav aria-label="Main"><ul>
        ${sections
          .filter((section) => section.on(config))
          .map(
            (section) => html`<li key=${section.page}>
              <a href=${section.href} aria-current=${route.page === section.page ? 'page' : undefined}>${section.label}</a>
            </li>`,
          )}
      </ul></nav>
      <div class="session">
        ${config.apiBase ? html`<span>API: ${config.apiBase}</span>` : null}
        ${signedIn ? html`<button type="button" onClick=${signOut}>Sign out</button>` : null}
      </div>
    </header>
    ${
      signIn !== undefined
        ? html`<${TokenForm} reason=${signIn} onSaved=${() => {
            setSignIn(undefined);
            setGeneration(generation + 1);
          }} />`
        : html`<${Page} key=${`${route.page}-${route.id ?? ''}-${generation}`} api=${api} config=${config} route=${route} />`
    }
  </div>`;
}

async function start() {
  let config = defaults;
  try {
    const response = await fetch('ui/config.json', { cache: 'no-store' });
    if (response.ok) config = { ...defaults, ...(await response.json()) };
  } catch {
    // No settings file: the job API is on this origin.
  }
  const root = document.getElementById('app');
  root.textContent = '';
  render(html`<${App} config=${config} />`, root);
}

start();
