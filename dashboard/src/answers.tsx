/**
 * A job's selection points as people decided them: each answer with who gave it, when and how (a
 * signed review link, the CLI, the job API, MCP, this dashboard, a bulk action, or the default at
 * the timeout), and each selection point's approval rounds with the reviewers' notices.
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

/**
 * What an answer chose as a person reads it: each option's label as the reviewer saw it, its id
 * beside it for auditors (`Keep claim 3 as drafted (f1)`); the id alone where no label is known.
 */
export function choiceText(answer: {
  options: readonly string[];
  labels?: readonly string[] | undefined;
}): string {
  return answer.options
    .map((id, index) => {
      const label = answer.labels?.[index]?.trim();
      return label && label !== id ? `${label} (${id})` : id;
    })
    .join(', ');
}

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
                <td>{choiceText(answer)}</td>
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

type Rounds = NonNullable<JobView['selectionRounds']>[number];

/** Whether a selection point had rounds beside its answer: notices, a second approver, a timeout's default. */
const hadRounds = (selection: Rounds): boolean =>
  selection.notices !== undefined || selection.approvals.some((answer) => answer.role !== 'approver');

/** One line of a selection point's rounds: an answer or a notice's delivery, at its time. */
interface RoundLine {
  at: string;
  round: string;
  what: string;
  who: string;
  how: { text: string; tag: string; error?: string | undefined };
}

/** What a notice was, in words: the first notice, the call for the second approval, reminder n, the default taken. */
function noticeText(label: NonNullable<Rounds['notices']>[number]['label'], reminder: number): string {
  if (label === 'reminder') return `reminder ${reminder}`;
  if (label === 'notice of the default taken') return 'notice: the default answer was taken';
  return label === 'notice' ? 'first notice' : 'call for the second approval';
}

/** A selection point's answers and notices in the order they happened. */
function roundLines(selection: Rounds): RoundLine[] {
  const lines: RoundLine[] = [];
  for (const answer of selection.approvals)
    lines.push({
      at: answer.at,
      round: `round ${answer.round}`,
      what: `${answer.role} chose: ${choiceText(answer)}`,
      who: answer.by ?? (answer.via === 'timeout' ? 'nobody (timed out)' : 'not named'),
      how: { text: channelText[answer.via], tag: `tag via-${answer.via}` },
    });
  let reminders = 0;
  for (const notice of selection.notices ?? []) {
    if (notice.label === 'reminder') reminders += 1;
    for (const delivery of notice.deliveries)
      lines.push({
        at: delivery.at,
        round: '',
        what: noticeText(notice.label, reminders),
        who: delivery.channel,
        how: {
          text: `${delivery.state} (${plural(delivery.attempts, 'attempt')})`,
          tag: `status status-${delivery.state === 'sent' ? 'SUCCEEDED' : 'FAILED'}`,
          error: delivery.error,
        },
      });
  }
  return lines.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

/**
 * Each selection point's approval rounds (`selectionRounds`), oldest first: who answered in which
 * round (the one approver, or the first and the second), when and how; each notice sent (the first,
 * the call for the second approval, reminders) by channel with its delivery; and, while the job
 * waits, the reviewers' rule, the next reminder and when the default answer is taken.
 */
export function ReviewNotices({ job, step }: { job: JobView; step: (name: string) => string }) {
  const rounds = (job.selectionRounds ?? []).filter(hadRounds);
  if (rounds.length === 0) return null;
  const review = job.review;
  const waiting = job.status === 'AWAITING_INPUT';
  return (
    <section class="card" aria-labelledby="review-heading">
      <h2 id="review-heading">Approval rounds</h2>
      {review ? (
        <p class="muted small">
          Reviewers' rule <strong>{review.rule}</strong>
          {review.approvals > 1 ? `; ${review.approvals} different people must confirm the same options` : ''}
          .
          {waiting && review.nextNoticeAt ? (
            <>
              {' '}
              Next reminder <When at={review.nextNoticeAt} /> ({formatRelative(review.nextNoticeAt)}).
            </>
          ) : null}
        </p>
      ) : null}
      {rounds.map((selection) => (
        <div class="table-card" key={selection.step}>
          <table class="jobs" data-step={selection.step}>
            <caption>
              Rounds at {step(selection.step)}: who answered and who was told, in order
              {selection.timeout && waiting ? (
                <span class="sub">
                  Without an answer, the default
                  {selection.timeout.answer?.length
                    ? ` (${choiceText({ options: selection.timeout.answer, labels: selection.timeout.labels })})`
                    : ''}{' '}
                  is taken <When at={selection.timeout.at} /> ({formatRelative(selection.timeout.at)}).
                </span>
              ) : null}
            </caption>
            <TableHead columns={['When', 'Round', 'What', 'Who or channel', 'How']} />
            <tbody>
              {roundLines(selection).map((line) => (
                <tr key={`${line.at}-${line.what}-${line.who}`}>
                  <td class="nowrap">
                    <When at={line.at} />
                  </td>
                  <td>{line.round}</td>
                  <td>{line.what}</td>
                  <td>{line.who}</td>
                  <td>
                    <span class={line.how.tag}>{line.how.text}</span>
                    {line.how.error ? <span class="sub">{line.how.error}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </section>
  );
}
