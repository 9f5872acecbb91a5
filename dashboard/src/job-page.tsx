/** One job: its actions, its selection, why it failed, its facts and usage, steps, callback, report. */

import { useEffect, useState } from 'preact/hooks';
import { Answers, ReviewNotices } from './answers';
import { downloadFile } from './api';
import { Notice, PageHead, Pending, SandboxBanner, StatusBadge, TableHead, Tiles, When } from './components';
import {
  formatDuration,
  formatTime,
  jobDuration,
  jobTitle,
  plural,
  statusText,
  stepTitle,
  upstreamText,
} from './format';
import { useAction, useFocusHeading, useLoaded, useNow } from './hooks';
import { LiveNote } from './live-note';
import { batchHref, jobsHash } from './routing';
import { StreamedAnswer } from './streamed-answer';
import type {
  Api,
  JobError,
  JobView,
  ReportAnswer,
  ReportFile,
  Settings,
  Timeline,
  TimelineStep,
} from './types';

const jobRefreshMs = 1500;
/** Where the page remembers who answers selections from this browser. */
const answererKey = 'opflow.answerer';
export const unfinished: readonly string[] = ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT'];

function SelectionForm(props: { api: Api; job: JobView; onAnswered: (text: string) => void }) {
  const { api, job, onAnswered } = props;
  const pending = job.pending!;
  const [chosen, setChosen] = useState(() => pending.options.filter((o) => o.preselected).map((o) => o.id));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [by, setBy] = useState(() => localStorage.getItem(answererKey) ?? '');
  const toggle = (id: string) =>
    setChosen(chosen.includes(id) ? chosen.filter((value) => value !== id) : [...chosen, id]);
  const valid = chosen.length >= pending.min && chosen.length <= pending.max;
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const name = by.trim();
      if (name) localStorage.setItem(answererKey, name);
      await api('POST', `/jobs/${encodeURIComponent(job.id)}/selection`, {
        selected: chosen,
        via: 'dashboard',
        ...(name ? { by: name } : {}),
      });
      setError(undefined);
      onAnswered('Selection sent; the job goes on.');
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const range = pending.min === pending.max ? `${pending.min}` : `${pending.min} to ${pending.max}`;
  return (
    <section class="panel attention" aria-labelledby="selection-heading">
      <h2 id="selection-heading">Waiting for your selection</h2>
      <form onSubmit={submit}>
        <fieldset class="options" aria-describedby="selection-rule">
          <legend>{pending.prompt}</legend>
          <p id="selection-rule" class="muted small">
            Choose {range} of {plural(pending.options.length, 'option')}; {chosen.length} chosen.
          </p>
          {pending.options.map((option) => (
            <label>
              <input
                type="checkbox"
                name="option"
                value={option.id}
                checked={chosen.includes(option.id)}
                onChange={() => toggle(option.id)}
              />
              <span>
                {option.label} <span class="muted small">({option.id})</span>
                {option.detail ? <span class="detail">{option.detail}</span> : null}
              </span>
            </label>
          ))}
        </fieldset>
        <div class="field answerer">
          <label for="answered-by">Your name</label>
          <input
            id="answered-by"
            value={by}
            maxLength={200}
            autocomplete="name"
            onInput={(event) => setBy(event.currentTarget.value)}
            aria-describedby="answered-by-hint"
          />
          <span id="answered-by-hint" class="hint">
            optional; kept with the answer in the job's history (remembered in this browser)
          </span>
        </div>
        <button class="primary" type="submit" disabled={busy || !valid}>
          Submit selection
        </button>
      </form>
      <Notice error={error} />
    </section>
  );
}

function ErrorFacts({ error }: { error: JobError }) {
  return (
    <dl class="facts">
      <dt>Message</dt>
      <dd>{error.message}</dd>
      <dt>Kind</dt>
      <dd>
        {error.kind}
        {error.retryable ? ' (retryable)' : ''}
      </dd>
      {error.step ? (
        <>
          <dt>Step</dt>
          <dd>{error.step}</dd>
        </>
      ) : null}
      {error.operationId ? (
        <>
          <dt>Operation</dt>
          <dd>{error.operationId}</dd>
        </>
      ) : null}
      {error.code !== undefined ? (
        <>
          <dt>Code</dt>
          <dd>{error.code}</dd>
        </>
      ) : null}
      {error.httpStatus !== undefined ? (
        <>
          <dt>HTTP status</dt>
          <dd>{error.httpStatus}</dd>
        </>
      ) : null}
      {error.correlationId ? (
        <>
          <dt>Correlation id</dt>
          <dd>
            <code>{error.correlationId}</code>
          </dd>
        </>
      ) : null}
      {error.at ? (
        <>
          <dt>At</dt>
          <dd>{formatTime(error.at)}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** The figures of one step on the timeline, as one line of text. */
function stepFigures(step: TimelineStep): string {
  const parts = [formatTime(step.startedAt)];
  if (step.durationMs !== undefined) parts.push(`took ${formatDuration(step.durationMs)}`);
  parts.push(
    `${plural(step.calls ?? 0, 'call')}${step.callMs ? ` (${formatDuration(step.callMs)} in calls)` : ''}`,
  );
  if (step.retries) parts.push(step.retries === 1 ? '1 retry' : `${step.retries} retries`);
  if (step.polls) parts.push(plural(step.polls, 'poll'));
  if (step.billedUnits) parts.push(plural(step.billedUnits, 'billed unit'));
  if (step.throttled) parts.push(`${step.throttled} throttled`);
  return parts.join(' · ');
}

function errorLine(error: JobError): string {
  const code = error.code !== undefined ? ` ${error.code}` : '';
  const http = error.httpStatus ? ` (HTTP ${error.httpStatus})` : '';
  return `${error.kind}${code}${http}: ${error.message}`;
}

function StepTimeline({ timeline }: { timeline: Timeline }) {
  return (
    <ol class="timeline" aria-label="Steps">
      {timeline.steps.map((step) => (
        <li class={step.state} key={step.name}>
          <span class="step-name">{step.title ?? step.name}</span>
          <span class="muted small">{` ${step.operation ?? ''} · ${step.state}`}</span>
          {step.startedAt ? <div class="figures">{stepFigures(step)}</div> : null}
          {step.skipped ? <div class="muted small">{`skipped: ${step.skipped}`}</div> : null}
          {step.errors?.length ? (
            <ul class="errors">
              {step.errors.map((error) => (
                <li>
                  {errorLine(error)}
                  {error.correlationId ? (
                    <>
                      {' · correlation id '}
                      <code>{error.correlationId}</code>
                    </>
                  ) : null}
                  {` · ${formatTime(error.at)}`}
                </li>
              ))}
            </ul>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

function Report({ api, config, job, full }: { api: Api; config: Settings; job: JobView; full?: boolean }) {
  const [files, setFiles] = useState<ReportFile[] | undefined>(undefined);
  const [reportHtml, setReportHtml] = useState<{ srcdoc: string } | { src: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const answer = await api<ReportAnswer>('GET', `/jobs/${encodeURIComponent(job.id)}/report`);
        if (!live) return;
        setFiles(answer.files);
        const page = answer.files.find((file) => file.name === 'report.html');
        if (page?.href) {
          const text = await api<string>('GET', page.href);
          if (live) setReportHtml({ srcdoc: text });
        } else if (page?.url) setReportHtml({ src: page.url });
      } catch (failure) {
        if (live) setError((failure as Error).message);
      }
    })();
    return () => {
      live = false;
    };
  }, [job.id]);

  const download = (file: ReportFile) =>
    downloadFile(config, file).catch((failure: Error) =>
      setError(`could not download ${file.name}: ${failure.message}`),
    );

  const attachments = (files ?? []).filter((file) => file.name.startsWith('attachments/'));
  const others = (files ?? []).filter((file) => !file.name.startsWith('attachments/'));
  return (
    <section class="card" aria-labelledby="report-heading">
      <h2 id="report-heading">{full ? 'Downloads' : 'Report'}</h2>
      {full ? null : (
        <p>
          <a class="button" href={`#/jobs/${encodeURIComponent(job.id)}/report`}>
            Open the report full page
          </a>
        </p>
      )}
      <Notice error={error} />
      {reportHtml && !full ? (
        <iframe class="report" title={`Report of ${jobTitle(job)}`} sandbox="" {...reportHtml} />
      ) : files === undefined && !error ? (
        <p aria-busy="true">Loading the report…</p>
      ) : null}
      {files ? (
        <div class="grid2">
          <div>
            <h3>Files</h3>
            <ul class="plain">
              {others.map((file) => (
                <li>
                  <button type="button" onClick={() => download(file)}>
                    Download {file.name}
                  </button>
                </li>
              ))}
            </ul>
          </div>
          <div>
            <h3>Attachments</h3>
            {attachments.length ? (
              <ul class="plain">
                {attachments.map((file) => (
                  <li>
                    <button type="button" onClick={() => download(file)}>
                      Download {file.name.slice('attachments/'.length)}
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">None.</p>
            )}
          </div>
        </div>
      ) : null}
    </section>
  );
}

/** Whether the job's callback is still to be sent or retried. */
function callbackPending(job: JobView): boolean {
  return Boolean(job.callbackUrl) && (job.callback === undefined || job.callback.state === 'pending');
}

/** The job's callback (`callbackUrl`): the delivery's state and every attempt. */
function Callback({ job }: { job: JobView }) {
  const callback = job.callback;
  const ended = !unfinished.includes(job.status);
  return (
    <section class="card" aria-labelledby="callback-heading">
      <h2 id="callback-heading">Callback</h2>
      <dl class="facts">
        <dt>URL</dt>
        <dd>
          <code>{job.callbackUrl}</code>
        </dd>
        <dt>Delivery</dt>
        <dd>
          {callback
            ? `${callback.state} (round ${callback.round})`
            : ended
              ? 'being sent'
              : 'when the job ends'}
        </dd>
        {callback?.deliveredAt ? (
          <>
            <dt>Delivered</dt>
            <dd>{formatTime(callback.deliveredAt)}</dd>
          </>
        ) : null}
        {callback?.nextAttemptAt && callback.state === 'pending' ? (
          <>
            <dt>Next attempt</dt>
            <dd>{formatTime(callback.nextAttemptAt)}</dd>
          </>
        ) : null}
      </dl>
      {callback?.attempts?.length ? (
        <table class="jobs">
          <caption>{plural(callback.attempts.length, 'attempt')}</caption>
          <TableHead columns={['Round', 'At', 'Answer', 'Took']} />
          <tbody>
            {callback.attempts.map((attempt) => (
              <tr>
                <td>{attempt.round}</td>
                <td>{formatTime(attempt.at)}</td>
                <td>{attempt.status !== undefined ? `HTTP ${attempt.status}` : (attempt.error ?? '')}</td>
                <td>{formatDuration(attempt.durationMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

interface LoadedJob {
  job: JobView;
  timeline: Timeline | undefined;
}

export function JobPage({ api, config, id }: { api: Api; config: Settings; id: string }) {
  const { data, error, load, live } = useLoaded<LoadedJob>(
    async () => {
      const { job } = await api<{ job: JobView }>('GET', `/jobs/${encodeURIComponent(id)}`);
      const timeline = config.timeline
        ? await api<Timeline>('GET', `/jobs/${encodeURIComponent(id)}/timeline`).catch(() => undefined)
        : undefined;
      return { job, timeline };
    },
    [api, id],
    jobRefreshMs,
    // While it runs, and while its callback is still to be delivered (attempts show as they come).
    (loaded) =>
      loaded !== undefined && (unfinished.includes(loaded.job.status) || callbackPending(loaded.job)),
    { api, config, filter: { jobId: id } },
  );
  const { busy, notice, setNotice, run } = useAction(load);
  const job = data?.job;
  const heading = useFocusHeading(id, job !== undefined);
  const timeline = data?.timeline;
  const running = job !== undefined && unfinished.includes(job.status);
  // "running for" moves each second on its own: a step can run for minutes without an event.
  const now = useNow(1000, running);

  const act = (label: string, path: string, body?: unknown) =>
    run(async () => {
      await api('POST', path, body);
      return label;
    });
  if (job === undefined) {
    return <Pending back="#/" backLabel="All jobs" title={`Job ${id}`} heading={heading} error={error} />;
  }
  const cancel = () => {
    if (!confirm(`Cancel ${jobTitle(job)}? A call under way finishes, but its result is dropped.`)) return;
    act('Job cancelled.', `/jobs/${encodeURIComponent(id)}/cancel`);
  };
  const retry = (fromStart: boolean) =>
    act(
      fromStart ? 'Job restarted from its first step.' : 'Job retried from the step it stopped at.',
      `/jobs/${encodeURIComponent(id)}/retry`,
      { fromStart },
    );
  const usage: Partial<JobView['usage']> = job.usage ?? {};
  const canRetry = job.status === 'FAILED' || job.status === 'CANCELLED';
  const step = (name: string) => stepTitle(config.workflowDocs, job.workflow, name);
  const took = jobDuration(job, now);
  // The steps that stream an answer (LLM chat, encyclopedia Q&A): shown as it arrives.
  const streamSteps =
    config.workflowDocs
      ?.find((doc) => doc.name === job.workflow)
      ?.steps.filter((doc) => doc.kind === 'stream')
      .map((doc) => doc.name) ?? [];
  return (
    <main id="main">
      <PageHead
        heading={heading}
        back={{ href: '#/', label: 'All jobs' }}
        title={
          <>
            {jobTitle(job)} <StatusBadge status={job.status} />
          </>
        }
        subtitle={
          <>
            {job.workflow} · created <When at={job.createdAt} />
            {job.finishedAt ? ` · took ${formatDuration(took)}` : ` · running for ${formatDuration(took)}`}
            {running ? (
              <>
                {' · '}
                <LiveNote state={live} />
              </>
            ) : null}
          </>
        }
      >
        {running ? (
          <button class="danger" type="button" disabled={busy} onClick={cancel}>
            Cancel job
          </button>
        ) : null}
        {canRetry ? (
          <button class="primary" type="button" disabled={busy} onClick={() => retry(false)}>
            Retry from {step(job.lastError?.step ?? job.step)}
          </button>
        ) : null}
        {canRetry ? (
          <button type="button" disabled={busy} onClick={() => retry(true)}>
            Retry from the start
          </button>
        ) : null}
        {config.starts?.rerun ? (
          <a class="button" href={`#/new?from=${encodeURIComponent(job.id)}`}>
            Run again like this…
          </a>
        ) : null}
      </PageHead>
      {job.upstream?.kind === 'sandbox' ? <SandboxBanner what="This job ran" /> : null}
      <p class="visually-hidden" aria-live="polite">
        Status {job.status}, step {job.step}
      </p>
      <Notice {...(notice ?? {})} />
      <Notice error={error} />
      {job.status === 'AWAITING_INPUT' && job.pending ? (
        <SelectionForm
          key={job.version}
          api={api}
          job={job}
          onAnswered={(text) => {
            setNotice({ ok: text });
            load();
          }}
        />
      ) : null}
      {streamSteps.length > 0 ? (
        <StreamedAnswer api={api} config={config} job={job} streamSteps={streamSteps} />
      ) : null}
      {job.lastError ? (
        <section class={`panel ${job.status === 'FAILED' ? 'error' : ''}`} aria-labelledby="error-heading">
          <h2 id="error-heading">{job.status === 'FAILED' ? 'Why it failed' : 'Last error (retried)'}</h2>
          <ErrorFacts error={job.lastError} />
        </section>
      ) : null}
      <Tiles
        label="Usage"
        tiles={[
          { label: 'Step', value: <span class="small">{step(job.step)}</span>, sub: statusText(job.status) },
          {
            label: 'Calls',
            value: (usage.calls ?? 0).toLocaleString(),
            // A call out (an answer streaming) is counted when it ends: say it is under way meanwhile.
            sub: `${job.callSince ? '1 under way · ' : ''}${usage.failedCalls ?? 0} failed, ${usage.throttledCalls ?? 0} throttled`,
          },
          { label: 'Billed units', value: (usage.billedUnits ?? 0).toLocaleString() },
          { label: 'Time in calls', value: formatDuration(usage.callMs ?? 0) },
          { label: job.finishedAt ? 'Took' : 'Running for', value: formatDuration(took) },
        ]}
      />
      <div class="grid2">
        <section class="card" aria-labelledby="facts-heading">
          <h2 id="facts-heading">Job</h2>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code class="id">{job.id}</code>
            </dd>
            {job.label ? (
              <>
                <dt>Label</dt>
                <dd>{job.label}</dd>
              </>
            ) : null}
            <dt>Workflow</dt>
            <dd>{job.workflow}</dd>
            <dt>Status</dt>
            <dd>{job.status}</dd>
            <dt>Current step</dt>
            <dd>
              {step(job.step)} <span class="muted small">({job.step})</span>
            </dd>
            <dt>Tenant</dt>
            <dd>{job.tenant}</dd>
            <dt>Upstream</dt>
            <dd>{upstreamText(job.upstream)}</dd>
            <dt>Source</dt>
            <dd>{job.source}</dd>
            {job.batchId ? (
              <>
                <dt>Batch</dt>
                <dd>
                  <a href={config.batches ? batchHref(job.batchId) : jobsHash({ batchId: job.batchId })}>
                    {job.batchId}
                  </a>
                </dd>
              </>
            ) : null}
            <dt>Selection</dt>
            <dd>{job.selection?.mode === 'manual' ? 'manual: a person answers' : 'auto: defaults taken'}</dd>
            <dt>Priority</dt>
            <dd>{job.priority ?? 'normal'}</dd>
            {job.maxUnits !== undefined ? (
              <>
                <dt>Cost cap</dt>
                <dd>{plural(job.maxUnits, 'billed unit')}</dd>
              </>
            ) : null}
            <dt>Created</dt>
            <dd>
              <When at={job.createdAt} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When at={job.updatedAt} />
            </dd>
            {job.finishedAt ? (
              <>
                <dt>Finished</dt>
                <dd>
                  <When at={job.finishedAt} /> (took {formatDuration(took)})
                </dd>
              </>
            ) : null}
            <dt>Deadline</dt>
            <dd>
              <When at={job.deadlineAt} />
            </dd>
            {job.runs?.length ? (
              <>
                <dt>Runs</dt>
                <dd>
                  {job.runs.length + 1} (retried {plural(job.runs.length, 'time')})
                </dd>
              </>
            ) : null}
          </dl>
        </section>
        <section class="card" aria-labelledby="usage-heading">
          <h2 id="usage-heading">Usage</h2>
          <dl class="facts">
            <dt>Calls</dt>
            <dd>
              {usage.calls ?? 0} ({usage.failedCalls ?? 0} failed, {usage.throttledCalls ?? 0} throttled)
            </dd>
            <dt>Billed units</dt>
            <dd>{usage.billedUnits ?? 0}</dd>
            <dt>Tokens</dt>
            <dd>{usage.tokens ?? 0}</dd>
            <dt>Time in calls</dt>
            <dd>{formatDuration(usage.callMs ?? 0)}</dd>
            <dt>Repeated creates</dt>
            <dd>{usage.duplicateCreates ?? 0}</dd>
            <dt>Repeated reads</dt>
            <dd>{usage.duplicateReads ?? 0}</dd>
            <dt>Attempts / polls (current step)</dt>
            <dd>
              {job.attempts ?? 0} / {job.polls ?? 0}
            </dd>
          </dl>
        </section>
      </div>
      <Answers job={job} step={step} />
      <ReviewNotices job={job} step={step} />
      <section class="card" aria-labelledby="steps-heading">
        <h2 id="steps-heading">Steps</h2>
        {timeline ? (
          <StepTimeline timeline={timeline} />
        ) : (
          <p class="muted">
            At step <strong>{step(job.step)}</strong>.
          </p>
        )}
      </section>
      {job.runs?.length ? (
        <section class="card" aria-labelledby="runs-heading">
          <h2 id="runs-heading">Earlier runs</h2>
          <ol>
            {job.runs.map((earlier) => (
              <li>
                {statusText(earlier.status)} at {step(earlier.step)}
                {earlier.error ? `: ${earlier.error.message}` : ''}; retried {formatTime(earlier.retriedAt)}{' '}
                from {step(earlier.retriedFrom)}
              </li>
            ))}
          </ol>
        </section>
      ) : null}
      {job.callbackUrl ? <Callback job={job} /> : null}
      {job.status === 'SUCCEEDED' ? <Report api={api} config={config} job={job} /> : null}
    </main>
  );
}

/** A job's report on a page of its own, the whole window wide and high, with its files below. */
export function ReportPage({ api, config, id }: { api: Api; config: Settings; id: string }) {
  const { data: job, error } = useLoaded(
    async () => (await api<{ job: JobView }>('GET', `/jobs/${encodeURIComponent(id)}`)).job,
    [api, id],
    60_000,
    () => false,
  );
  const heading = useFocusHeading(`report-${id}`, job !== undefined);
  const [frame, setFrame] = useState<{ srcdoc: string } | { src: string } | undefined>(undefined);
  const [frameError, setFrameError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const answer = await api<ReportAnswer>(
          'GET',
          `/jobs/${encodeURIComponent(id)}/report?file=report.html`,
        );
        const page = answer.files.find((file) => file.name === 'report.html');
        if (page?.href) {
          const text = await api<string>('GET', page.href);
          if (live) setFrame({ srcdoc: text });
        } else if (page?.url && live) setFrame({ src: page.url });
      } catch (failure) {
        if (live) setFrameError((failure as Error).message);
      }
    })();
    return () => {
      live = false;
    };
  }, [api, id]);
  const back = { href: `#/jobs/${encodeURIComponent(id)}`, label: 'The job' };
  if (job === undefined) {
    return (
      <Pending
        back={back.href}
        backLabel={back.label}
        title={`Report of ${id}`}
        heading={heading}
        error={error}
      />
    );
  }
  return (
    <main id="main" class="full">
      <PageHead heading={heading} back={back} title={<>Report: {jobTitle(job)}</>} subtitle={job.workflow} />
      <Notice error={frameError} />
      {frame ? (
        <iframe class="report" title={`Report of ${jobTitle(job)}`} sandbox="" {...frame} />
      ) : frameError ? null : (
        <p aria-busy="true">Loading the report…</p>
      )}
      <Report api={api} config={config} job={job} full />
    </main>
  );
}
