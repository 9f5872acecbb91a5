/**
 * A job's selection points as people decided them: each answer with who gave it, when and how (a
 * signed review link, the CLI, the job API, MCP, this dashboard, a bulk action, or the default at
 * the timeout), and the reviewers notified of a selection still awaited.
 */
import { TableHead, When } from './components';
import { formatRelative, plural } from './format';
import type { JobView } from './types';

type Answer = NonNullable<JobView['answers']>[number];
type Channel = Answer['via'];

/** How an answer came, in words. */
export const channelText: Record<Channel, string> = {
  link: 'review link',
  cli: 'CLI (opflow resume)',
  api: 'job API',
  mcp: 'MCP',
  dashboard: 'dashboard',
  timeout: 'default on timeout',
  bulk: 'bulk action',
};

/** Every answer of the job, oldest first, under the title of the step it answered. */
export function Answers(props: { job: JobView; step: (name: string) => string }) {
  const { job, step } = props;
  const answers = job.answers ?? [];
  if (answers.length === 0) return null;
  return (
    <section class="card" aria-labelledby="answers-heading">
      <h2 id="answers-heading">Answers</h2>
      <div class="table-card">
        <table class="jobs">
          <caption>
            {plural(answers.length, 'answer')} to its selection points: who answered, when and how
          </caption>
          <TableHead columns={['Selection point', 'Chosen', 'Who', 'How', 'When']} />
          <tbody>
            {answers.map((answer) => (
              <tr key={`${answer.step}-${answer.version}`} data-via={answer.via}>
                <td>
                  {step(answer.step)}
                  {answer.applied === false ? (
                    <span class="sub">first approval: waiting for a second person</span>
                  ) : null}
                </td>
                <td>{answer.options.join(', ')}</td>
                <td>{answer.by ?? (answer.via === 'timeout' ? 'nobody (timed out)' : 'not named')}</td>
                <td>
                  <span class={`tag via-${answer.via}`}>{channelText[answer.via]}</span>
                </td>
                <td class="nowrap">
                  <When at={answer.at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Who was told that the job waits, by which channel and how it went; the next reminder and the timeout. */
export function ReviewNotices({ job }: { job: JobView }) {
  const review = job.review;
  if (!review) return null;
  const waiting = job.status === 'AWAITING_INPUT';
  return (
    <section class="card" aria-labelledby="review-heading">
      <h2 id="review-heading">Reviewers notified</h2>
      <p class="muted small">
        Rule <strong>{review.rule}</strong>
        {review.approvals > 1 ? `; ${review.approvals} different people must confirm the same options` : ''}.
        {waiting && review.nextNoticeAt ? (
          <>
            {' '}
            Next reminder <When at={review.nextNoticeAt} /> ({formatRelative(review.nextNoticeAt)}).
          </>
        ) : null}
        {waiting && review.timeoutAt ? (
          <>
            {' '}
            Without an answer, the default is taken <When at={review.timeoutAt} /> (
            {formatRelative(review.timeoutAt)}).
          </>
        ) : null}
      </p>
      <div class="table-card">
        <table class="jobs">
          <caption>Each notice sent: the first, then one per reminder</caption>
          <TableHead columns={['Notice', 'Channel', 'Delivery', { label: 'Attempts', num: true }, 'When']} />
          <tbody>
            {review.rounds.flatMap((round) =>
              round.deliveries.map((delivery) => (
                <tr key={`${round.round}-${delivery.channel}`}>
                  <td>{round.round === 1 ? 'first notice' : `reminder ${round.round - 1}`}</td>
                  <td>{delivery.channel}</td>
                  <td>
                    <span class={`status status-${delivery.state === 'sent' ? 'SUCCEEDED' : 'FAILED'}`}>
                      {delivery.state}
                    </span>
                    {delivery.error ? <span class="sub">{delivery.error}</span> : null}
                  </td>
                  <td class="num">{delivery.attempts}</td>
                  <td class="nowrap">
                    <When at={delivery.at} />
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
