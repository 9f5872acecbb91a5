/**
 * Where a job's time goes on aws-local: `npm run aws-local -- --timeline <file>` writes one line per
 * SQS-triggered invocation (scripts/aws-local.ts), the step worker logs each commit's `nextRunAt`
 * (`step done` in functions.log). Joined per job, each message splits into the wait it asked for
 * (sent until its step was due), the wait beyond that (SQS's whole-second delays, the event
 * source's receive) and its handler's run.
 */
import * as z from 'zod';

const timelineLine = z.object({
  function: z.string(),
  bodies: z.array(z.string()),
  sentAt: z.array(z.number()),
  receivedAt: z.number(),
  handlerStartedAt: z.number(),
  handlerEndedAt: z.number(),
});

const stepDone = z.object({
  message: z.literal('step done'),
  jobId: z.string(),
  version: z.number(),
  nextRunAt: z.number().optional(),
});

const workBody = z.object({ jobId: z.string(), version: z.number() });

/** One job's time on aws-local, in milliseconds. */
export interface JobTimeline {
  jobId: string;
  /** Step worker invocations that took one of its messages. */
  messages: number;
  /** Its first message's send (epoch ms). */
  firstSentAt: number;
  /** Its last handler's end (epoch ms). */
  lastEndedAt: number;
  /** From its first message's send to its last handler's end. */
  spanMs: number;
  /** Its messages' handlers, from start to end (a batch's handler counts for each of its jobs). */
  handlerMs: number;
  /** Sent until due: the waits its steps asked for (polls, tokens). */
  askedMs: number;
  /** Due until received: SQS's whole-second delays and the event source's receive. */
  beyondMs: number;
}

/** Parses the JSON lines of `text`, keeping those `schema` accepts. */
function linesOf<T>(text: string, schema: z.ZodType<T>): T[] {
  const kept: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = schema.safeParse(JSON.parse(line));
    if (parsed.success) kept.push(parsed.data);
  }
  return kept;
}

/** Each step worker job's timeline, from a `--timeline` file's text and functions.log's. */
export function jobTimelines(timelineText: string, functionsLog: string): JobTimeline[] {
  const dueAt = new Map<string, number>();
  for (const done of linesOf(functionsLog, stepDone))
    if (done.nextRunAt !== undefined) dueAt.set(`${done.jobId}@${done.version}`, done.nextRunAt);
  const jobs = new Map<string, JobTimeline>();
  for (const line of linesOf(timelineText, timelineLine)) {
    if (line.function !== 'opflow-step-worker') continue;
    line.bodies.forEach((body, index) => {
      const message = workBody.safeParse(JSON.parse(body));
      if (!message.success) return;
      const sentAt = line.sentAt[index] ?? line.receivedAt;
      const { jobId, version } = message.data;
      // Due when its commit said (the CLI's first message and the sweeper's: when sent).
      const due = Math.min(line.receivedAt, Math.max(sentAt, dueAt.get(`${jobId}@${version}`) ?? sentAt));
      const job = jobs.get(jobId) ?? {
        jobId,
        messages: 0,
        spanMs: 0,
        handlerMs: 0,
        askedMs: 0,
        beyondMs: 0,
        firstSentAt: sentAt,
        lastEndedAt: line.handlerEndedAt,
      };
      job.messages += 1;
      job.handlerMs += line.handlerEndedAt - line.handlerStartedAt;
      job.askedMs += due - sentAt;
      job.beyondMs += line.receivedAt - due;
      job.firstSentAt = Math.min(job.firstSentAt, sentAt);
      job.lastEndedAt = Math.max(job.lastEndedAt, line.handlerEndedAt);
      job.spanMs = job.lastEndedAt - job.firstSentAt;
      jobs.set(jobId, job);
    });
  }
  return [...jobs.values()];
}

/** The mean of each figure over `jobs`, in seconds; and how long `wallSeconds` spent outside them. */
export function timelineSummary(jobs: JobTimeline[], wallSeconds: number) {
  const mean = (pick: (job: JobTimeline) => number) =>
    Number((jobs.reduce((sum, job) => sum + pick(job), 0) / Math.max(1, jobs.length) / 1000).toFixed(2));
  const first = Math.min(...jobs.map((job) => job.firstSentAt));
  const last = Math.max(...jobs.map((job) => job.lastEndedAt));
  return {
    jobs: jobs.length,
    messages: mean((job) => job.messages * 1000),
    span: mean((job) => job.spanMs),
    handler: mean((job) => job.handlerMs),
    asked: mean((job) => job.askedMs),
    beyond: mean((job) => job.beyondMs),
    /** The command's own time: its start, creating the jobs, noticing the last one finished. */
    outside: jobs.length > 0 ? Number((wallSeconds - (last - first) / 1000).toFixed(2)) : wallSeconds,
  };
}
