/** The batches: a list, and one batch with its progress, bad lines, summary files and jobs. */
import { downloadFile } from './api';
import { LineChart, StackedBar } from './charts';
import {
  Notice,
  PageHead,
  Pending,
  ProblemsTable,
  SandboxBanner,
  SandboxTag,
  StatusBadge,
  Tiles,
  When,
} from './components';
import { formatDuration, formatTime, plural, toDate } from './format';
import { useAction, useFocusHeading, useLoaded } from './hooks';
import { type JobColumn, JobRow, jobColumns } from './job-row';
import { listRefreshMs } from './jobs-page';
import { ListTable } from './list-table';
import { LiveNote } from './live-note';
import { batchHref, jobsHash } from './routing';
import type { Api, BatchAnswer, BatchList, BatchView, JobPage, Settings } from './types';

/** The columns of a batch's jobs. */
const batchJobColumns: JobColumn[] = ['status', 'step', 'calls', 'billed', 'updated'];
/** On a phone the columns after the job are hidden (style.css, `.batch-jobs`) and said under the job's title. */
const batchJobColumnsUnder: JobColumn[] = ['status', 'step', 'calls', 'billed', 'updated'];

export function BatchesPage({ api, config }: { api: Api; config: Settings }) {
  const heading = useFocusHeading('batches');
  const { data: page, error } = useLoaded(
    () => api<BatchList>('GET', '/batches?limit=50'),
    [api],
    listRefreshMs,
    undefined,
    { api, config, filter: {} },
  );
  const batches = page?.batches ?? [];
  // Batches of an earlier release carry no `sandbox` (they did not record their upstream).
  const sandboxBatches = batches.filter((batch) => batch.sandbox === true).length;
  return (
    <main id="main">
      <PageHead
        heading={heading}
        title="Batches"
        subtitle="Manifests and folders ingested, newest first; the figures follow their jobs live."
      >
        {config.starts?.manifests ? (
          <a class="button primary" href="#/upload">
            Upload a manifest or documents
          </a>
        ) : null}
      </PageHead>
      <Notice error={error} />
      {sandboxBatches > 0 ? (
        <SandboxBanner
          what={`${sandboxBatches} of ${plural(batches.length, 'batch', 'batches')} listed ran`}
        />
      ) : null}
      <ListTable
        rows={page?.batches}
        loading="Loading batches…"
        columns={[
          'Batch',
          'Status',
          'Workflow',
          'Progress',
          { label: 'Items', num: true },
          { label: 'Succeeded', num: true },
          { label: 'Failed', num: true },
          { label: 'Waiting or running', num: true },
          { label: 'Billed units', num: true },
          'ETA',
          'Created',
        ]}
        empty="No batches yet: opflow ingest <manifest or folder> --workflow <name> starts one."
        caption={(shown) => `${plural(shown.length, 'batch', 'batches')}, newest first; updates live.`}
        row={(batch) => (
          <tr key={batch.id} data-batch={batch.id} data-status={batch.status}>
            <td>
              <a href={batchHref(batch.id)}>{batch.name}</a>
              <SandboxTag job={{ upstream: batch.sandbox ? { kind: 'sandbox' } : undefined }} />
            </td>
            <td>
              <StatusBadge status={batch.status} />
            </td>
            <td>{batch.workflow}</td>
            <td style={{ minWidth: '9rem' }}>
              <div class="stack" role="img" aria-label={`${done(batch)} of ${batch.items} finished`}>
                <span class="s-ok" style={{ width: `${share(batch.totals.succeeded, batch.items)}%` }} />
                <span class="s-bad" style={{ width: `${share(batch.totals.failed, batch.items)}%` }} />
                <span class="s-cancel" style={{ width: `${share(batch.totals.cancelled, batch.items)}%` }} />
                <span class="s-run" style={{ width: `${share(batch.totals.running, batch.items)}%` }} />
              </div>
            </td>
            <td class="num">{batch.items}</td>
            <td class="num">{batch.totals.succeeded}</td>
            <td class="num">{batch.totals.failed + batch.totals.cancelled}</td>
            <td class="num">{batch.totals.waiting + batch.totals.running}</td>
            <td class="num">{batch.billedUnits.toLocaleString()}</td>
            <td>{batch.etaMs !== undefined ? formatDuration(batch.etaMs) : ''}</td>
            <td class="nowrap">
              <When at={batch.createdAt} />
            </td>
          </tr>
        )}
      />
    </main>
  );
}

const done = (batch: BatchView) => batch.totals.succeeded + batch.totals.failed + batch.totals.cancelled;
const share = (part: number, whole: number) => (100 * part) / Math.max(1, whole);

interface LoadedBatch {
  answer: BatchAnswer;
  jobs: JobPage;
}

export function BatchPage({ api, config, id }: { api: Api; config: Settings; id: string }) {
  const path = `/batches/${encodeURIComponent(id)}`;
  const { data, error, load, live } = useLoaded<LoadedBatch>(
    async () => ({
      answer: await api<BatchAnswer>('GET', path),
      jobs: await api<JobPage>('GET', `/jobs?batchId=${encodeURIComponent(id)}&limit=1000`),
    }),
    [api, id],
    listRefreshMs,
    (loaded) =>
      loaded !== undefined &&
      (loaded.answer.batch.status !== 'FINISHED' ||
        loaded.answer.batch.totals.running > 0 ||
        loaded.answer.batch.writingOutputs),
    { api, config, filter: { batchId: id } },
  );
  const { busy, notice, run } = useAction(load);
  const answer = data?.answer;
  const jobs = data?.jobs;
  const batch = answer?.batch;
  const heading = useFocusHeading(`batch-${id}`, batch !== undefined);
  if (answer === undefined || batch === undefined) {
    return (
      <Pending
        back="#/batches"
        backLabel="All batches"
        title={`Batch ${id}`}
        heading={heading}
        error={error}
      />
    );
  }
  const active = batch.status !== 'FINISHED';
  // A stopped batch starts nothing more: Cancel all is left for the jobs it still runs.
  const cancellable = active && (batch.status !== 'STOPPED' || batch.totals.running > 0);
  const act = (label: string, action: 'redrive' | 'cancel') =>
    run(async () => {
      if (action === 'redrive') {
        const outcome = await api<{ retried: number; refused: unknown[] }>('POST', `${path}/redrive`);
        return `${label}: ${plural(outcome.retried, 'item')} running again${outcome.refused.length ? `; ${outcome.refused.length} could not be` : ''}.`;
      }
      const outcome = await api<{ cancelled: number }>('POST', `${path}/cancel`);
      return `${label}: ${plural(outcome.cancelled, 'job')} cancelled; no new items start.`;
    });
  const t = batch.totals;
  // Items finished over time, from the batch's jobs (the first 1,000): the pace a chart shows.
  const finishedAt = (jobs?.jobs ?? [])
    .map((job) => toDate(job.finishedAt)?.getTime())
    .filter((at): at is number => at !== undefined)
    .sort((a, b) => a - b);
  const startedAt = toDate(batch.createdAt)?.getTime() ?? finishedAt[0] ?? Date.now();
  const curve = [{ at: startedAt, value: 0 }, ...finishedAt.map((at, index) => ({ at, value: index + 1 }))];
  const minutes = ((finishedAt[finishedAt.length - 1] ?? startedAt) - startedAt) / 60_000;
  const rate = finishedAt.length >= 2 && minutes > 0 ? finishedAt.length / minutes : undefined;
  const done = t.succeeded + t.failed + t.cancelled;
  const failures = t.failed + t.cancelled;
  const files = ['index.html', 'summary.csv', 'summary.xlsx', 'results.jsonl', 'failed.jsonl'];
  const sandboxJobs = jobs?.jobs.filter((job) => job.upstream?.kind === 'sandbox').length ?? 0;
  return (
    <main id="main">
      <PageHead
        heading={heading}
        back={{ href: '#/batches', label: 'All batches' }}
        title={
          <>
            {batch.name} <StatusBadge status={batch.status} />
            {batch.writingOutputs ? (
              <span class="muted" data-outputs="writing">
                {' '}
                finished, writing outputs
              </span>
            ) : null}
          </>
        }
        subtitle={
          <>
            {batch.workflow} · created <When at={batch.createdAt} /> · {formatDuration(batch.elapsedMs)}{' '}
            {active ? 'so far' : 'in all'} · <LiveNote state={live} />
          </>
        }
      />
      {batch.reason ? <p class="notice error">{batch.reason}</p> : null}
      {sandboxJobs > 0 ? <SandboxBanner what={`${plural(sandboxJobs, 'job')} of this batch ran`} /> : null}
      <div class="actions">
        {failures > 0 ? (
          <button class="primary" type="button" disabled={busy} onClick={() => act('Redrive', 'redrive')}>
            Redrive {plural(failures, 'failed item')}
          </button>
        ) : null}
        {cancellable ? (
          <button
            class="danger"
            type="button"
            disabled={busy}
            onClick={() => {
              if (
                confirm(
                  `Cancel batch ${batch.name}? No new items start and its unfinished jobs are cancelled.`,
                )
              )
                act('Cancelled', 'cancel');
            }}
          >
            Cancel all
          </button>
        ) : null}
      </div>
      <Notice {...(notice ?? {})} />
      <Notice error={error} />
      <section class="card" aria-labelledby="progress-heading">
        <h2 id="progress-heading">Progress</h2>
        <div class="progress-line">
          <label for="batch-progress">
            <strong>
              {done} of {plural(batch.items, 'item')} finished
            </strong>{' '}
            ({Math.round(share(done, batch.items))} %)
          </label>
          <span class="muted">
            {batch.etaMs !== undefined
              ? `about ${formatDuration(batch.etaMs)} to go`
              : active && batch.status !== 'STOPPED'
                ? 'time to go: after a few items finish'
                : ''}
          </span>
        </div>
        <progress id="batch-progress" class="visually-hidden" max={Math.max(1, batch.items)} value={done}>
          {done} of {batch.items}
        </progress>
        <StackedBar
          label="Items by where they stand"
          segments={[
            { label: 'Succeeded', value: t.succeeded, swatch: 's-ok' },
            { label: 'Failed', value: t.failed, swatch: 's-bad' },
            { label: 'Cancelled', value: t.cancelled, swatch: 's-cancel' },
            { label: 'Running', value: t.running, swatch: 's-run' },
            { label: 'Waiting to start', value: t.waiting, swatch: 's-wait' },
          ]}
        />
      </section>
      <Tiles
        label="Batch figures"
        tiles={[
          { label: 'Succeeded', value: t.succeeded, tone: 'ok' },
          {
            label: 'Failed',
            value: t.failed,
            tone: t.failed > 0 ? 'bad' : undefined,
            sub: `${t.cancelled} cancelled`,
          },
          { label: 'Running', value: t.running, tone: 'run', sub: `${t.waiting} waiting to start` },
          { label: 'Calls', value: batch.calls.toLocaleString() },
          { label: 'Billed units', value: batch.billedUnits.toLocaleString() },
          {
            label: 'Throughput',
            value: rate === undefined ? '—' : `${rate < 10 ? rate.toFixed(1) : Math.round(rate)}`,
            sub: 'items finished a minute',
          },
        ]}
      />
      <div class="grid2">
        <section class="card" aria-labelledby="figures-heading">
          <h2 id="figures-heading">Figures</h2>
          <dl class="facts">
            <dt>Succeeded</dt>
            <dd>{t.succeeded}</dd>
            <dt>Failed</dt>
            <dd>{t.failed}</dd>
            <dt>Cancelled</dt>
            <dd>{t.cancelled}</dd>
            <dt>Running</dt>
            <dd>{t.running}</dd>
            <dt>Waiting to start</dt>
            <dd>{t.waiting}</dd>
            <dt>Bad lines</dt>
            <dd>{answer.problemCount}</dd>
            <dt>Workflow</dt>
            <dd>{batch.workflow}</dd>
            <dt>Source</dt>
            <dd>
              <code>{batch.source}</code>
            </dd>
            <dt>Run</dt>
            <dd>
              {batch.run}: {batch.thisRun.records} records read{batch.thisRun.readingDone ? '' : ' so far'},{' '}
              {batch.thisRun.created} new, {batch.thisRun.existing} seen before
            </dd>
            <dt>Calls / billed units</dt>
            <dd>
              {batch.calls} / {batch.billedUnits}
            </dd>
            <dt>Elapsed</dt>
            <dd>{formatDuration(batch.elapsedMs)}</dd>
            <dt>ETA</dt>
            <dd>
              {batch.etaMs !== undefined
                ? formatDuration(batch.etaMs)
                : active && batch.status !== 'STOPPED'
                  ? 'after a few items finish'
                  : '—'}
            </dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="pace-heading">
          <h2 id="pace-heading" class="visually-hidden">
            Pace
          </h2>
          {curve.length > 1 ? (
            <LineChart
              title="Items finished over time"
              points={curve}
              max={batch.items}
              formatTime={(at) => formatTime(at)}
            />
          ) : (
            <p class="muted">The pace shows here once items finish.</p>
          )}
        </section>
      </div>
      <section class="card" aria-labelledby="outputs-heading">
        <h2 id="outputs-heading">Summary files</h2>
        {batch.writingOutputs ? (
          <p class="muted" role="status" data-outputs="writing">
            Finished, writing outputs: the summary files are offered here once they are written.
          </p>
        ) : batch.outputsAt === undefined ? (
          <p class="muted" data-outputs="none">
            No summary files yet: they are written once items are released.
          </p>
        ) : (
          <div class="actions" data-outputs={batch.outputsFinal ? 'final' : 'interim'}>
            {files.map((name) => (
              <button
                type="button"
                onClick={() =>
                  run(async () => {
                    await downloadFile(config, { name, href: `${path}/outputs/${name}`, url: '' });
                    return `${name} downloaded.`;
                  })
                }
              >
                Download {name}
              </button>
            ))}
          </div>
        )}
      </section>
      {answer.problems.length ? (
        <section class="card" aria-labelledby="problems-heading">
          <h2 id="problems-heading">Lines that could not be used</h2>
          <ProblemsTable
            caption={`${plural(answer.problemCount, 'problem')} in run ${batch.run}`}
            problems={answer.problems}
          />
        </section>
      ) : null}
      <section class="card batch-jobs" aria-labelledby="batch-jobs-heading">
        <h2 id="batch-jobs-heading">Jobs</h2>
        <ListTable
          rows={jobs?.jobs}
          loading="Loading jobs…"
          card={false}
          columns={jobColumns(batchJobColumns)}
          empty="No jobs yet: they are created as the manifest's lines are read."
          caption={(shown) => (
            <>
              {plural(shown.length, 'job')}
              {jobs?.cursor ? (
                <>
                  {' '}
                  shown; <a href={jobsHash({ batchId: id })}>all of them</a>
                </>
              ) : (
                ''
              )}
            </>
          )}
          row={(job) => (
            <JobRow
              key={job.id}
              config={config}
              job={job}
              columns={batchJobColumns}
              inBatch
              underOnPhone={batchJobColumnsUnder}
            />
          )}
        />
      </section>
    </main>
  );
}
