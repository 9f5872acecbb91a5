/**
 * The overview a team shows its managers: what runs now, what waits for a person, and over the last
 * 14 days the jobs finished per day (throughput), the billed units per day (cost) and each
 * workflow's record. Read from `GET /jobs?since=` (up to 5,000 jobs), refreshed every 10 s. When
 * some of those jobs ran on the built-in sandbox, a banner says how many: their figures are simulated.
 */
import { BarChart } from './charts';
import { Notice, PageHead, SandboxBanner, TableHead, Tiles } from './components';
import { dayNumber, formatDay, formatDuration, jobDuration, plural } from './format';
import { useFocusHeading, useLoaded } from './hooks';
import { jobsHash } from './routing';
import type { Api, JobPage, JobView, Settings } from './types';

const days = 14;
const pageLimit = 1000;
const maxPages = 5;

async function recentJobs(api: Api, since: string): Promise<{ jobs: JobView[]; complete: boolean }> {
  const jobs: JobView[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const query = new URLSearchParams({ since, limit: String(pageLimit) });
    if (cursor) query.set('cursor', cursor);
    const answer = await api<JobPage>('GET', `/jobs?${query}`);
    jobs.push(...answer.jobs);
    cursor = answer.cursor;
    if (!cursor) return { jobs, complete: true };
  }
  return { jobs, complete: false };
}

const median = (values: number[]) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export function OverviewPage({ api }: { api: Api; config: Settings }) {
  const heading = useFocusHeading('overview');
  const today = dayNumber(new Date());
  const first = new Date(Date.now() - (days - 1) * 86_400_000);
  const since = `${first.getFullYear()}-${String(first.getMonth() + 1).padStart(2, '0')}-${String(first.getDate()).padStart(2, '0')}`;
  const { data, error } = useLoaded(() => recentJobs(api, since), [api, since], 10_000);
  const jobs = data?.jobs ?? [];
  const finished = jobs.filter((job) => job.finishedAt);
  const count = (status: string) => jobs.filter((job) => job.status === status).length;
  const underWay = count('QUEUED') + count('RUNNING') + count('WAITING');
  const units = jobs.reduce((sum, job) => sum + (job.usage?.billedUnits ?? 0), 0);
  const calls = jobs.reduce((sum, job) => sum + (job.usage?.calls ?? 0), 0);
  const sandboxJobs = jobs.filter((job) => job.upstream?.kind === 'sandbox').length;
  const succeeded = count('SUCCEEDED');
  const failed = count('FAILED');
  const rate = succeeded + failed > 0 ? Math.round((100 * succeeded) / (succeeded + failed)) : undefined;
  const typical = median(
    finished.filter((job) => job.status === 'SUCCEEDED').map((job) => jobDuration(job) ?? 0),
  );

  // Per day, oldest first: jobs finished by outcome, and the units billed by jobs that day.
  const perDay = Array.from({ length: days }, (_, index) => {
    const day = today - (days - 1) + index;
    const date = new Date(first.getTime() + index * 86_400_000);
    return { day, label: formatDay(date), ok: 0, bad: 0, cancelled: 0, units: 0 };
  });
  for (const job of jobs) {
    const at = new Date(job.finishedAt ?? job.updatedAt);
    const slot = perDay.find((entry) => entry.day === dayNumber(at));
    if (!slot) continue;
    slot.units += job.usage?.billedUnits ?? 0;
    if (job.status === 'SUCCEEDED') slot.ok += 1;
    if (job.status === 'FAILED') slot.bad += 1;
    if (job.status === 'CANCELLED') slot.cancelled += 1;
  }
  const byWorkflow = new Map<
    string,
    { jobs: number; ok: number; bad: number; units: number; took: number[] }
  >();
  for (const job of jobs) {
    const entry = byWorkflow.get(job.workflow) ?? { jobs: 0, ok: 0, bad: 0, units: 0, took: [] };
    entry.jobs += 1;
    if (job.status === 'SUCCEEDED') {
      entry.ok += 1;
      entry.took.push(jobDuration(job) ?? 0);
    }
    if (job.status === 'FAILED') entry.bad += 1;
    entry.units += job.usage?.billedUnits ?? 0;
    byWorkflow.set(job.workflow, entry);
  }
  return (
    <main id="main">
      <PageHead
        heading={heading}
        title="Overview"
        subtitle={`The last ${days} days${data && !data.complete ? ` (the latest ${plural(jobs.length, 'job')} of them)` : ''}; updates itself.`}
      />
      <Notice error={error} />
      {sandboxJobs > 0 ? (
        <SandboxBanner what={`${sandboxJobs} of ${plural(jobs.length, 'job')} of these ${days} days ran`} />
      ) : null}
      {data === undefined ? (
        <p aria-busy="true">Loading the figures…</p>
      ) : (
        <>
          <Tiles
            label="Headline figures"
            tiles={[
              { label: 'Under way', value: underWay, tone: 'run', sub: 'queued, running or polling' },
              {
                label: 'Waiting for a person',
                value: <a href={jobsHash({ status: 'AWAITING_INPUT' })}>{count('AWAITING_INPUT')}</a>,
                tone: 'wait',
                sub: 'a selection to answer',
              },
              {
                label: 'Succeeded',
                value: succeeded,
                tone: 'ok',
                sub: rate === undefined ? '' : `${rate} % of finished`,
              },
              {
                label: 'Failed',
                value: <a href={jobsHash({ status: 'FAILED' })}>{failed}</a>,
                tone: failed > 0 ? 'bad' : undefined,
                sub: `${count('CANCELLED')} cancelled`,
              },
              {
                label: 'Billed units',
                value: units.toLocaleString(),
                sub: `${calls.toLocaleString()} calls`,
              },
              { label: 'Typical job', value: formatDuration(typical) || '—', sub: 'median time to succeed' },
            ]}
          />
          <div class="grid2">
            <section class="card" aria-labelledby="throughput-heading">
              <h2 id="throughput-heading" class="visually-hidden">
                Throughput
              </h2>
              <BarChart
                title="Jobs finished per day"
                series={[
                  { label: 'Succeeded', swatch: 's-ok' },
                  { label: 'Failed', swatch: 's-bad' },
                  { label: 'Cancelled', swatch: 's-cancel' },
                ]}
                groups={perDay.map((entry) => ({
                  label: entry.label,
                  values: [entry.ok, entry.bad, entry.cancelled],
                }))}
              />
            </section>
            <section class="card" aria-labelledby="cost-heading">
              <h2 id="cost-heading" class="visually-hidden">
                Cost
              </h2>
              <BarChart
                title="Billed units per day"
                series={[{ label: 'Billed units', swatch: 's-units' }]}
                groups={perDay.map((entry) => ({ label: entry.label, values: [entry.units] }))}
              />
            </section>
          </div>
          <div class="table-card">
            <table class="jobs">
              <caption>By workflow, the last {days} days</caption>
              <TableHead
                columns={[
                  'Workflow',
                  { label: 'Jobs', num: true },
                  { label: 'Succeeded', num: true },
                  { label: 'Failed', num: true },
                  { label: 'Billed units', num: true },
                  { label: 'Typical time', num: true },
                ]}
              />
              <tbody>
                {[...byWorkflow]
                  .sort((a, b) => b[1].jobs - a[1].jobs)
                  .map(([workflow, entry]) => (
                    <tr>
                      <td>
                        <a href={jobsHash({ workflow })}>{workflow}</a>
                      </td>
                      <td class="num">{entry.jobs}</td>
                      <td class="num">{entry.ok}</td>
                      <td class="num">{entry.bad}</td>
                      <td class="num">{entry.units.toLocaleString()}</td>
                      <td class="num">{formatDuration(median(entry.took)) || '—'}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </main>
  );
}
