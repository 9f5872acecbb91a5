/**
 * Where the time of a batch's last job goes (bench/throughput.ts `--detail`): the job that ended
 * last decides the makespan, so its time beyond its own tasks' time is split, exactly, into
 * - before its first call (admission);
 * - its polls' lateness: each task's true end (the sandbox's drawn duration) against the poll that
 *   found it done, split into the part the poll was aimed late (its due time, before any token
 *   pushed it, after the true end) and the part it waited for a token past that;
 * - the calls between a done poll and the next task's start (a confirm, a search: token waits);
 * - after its last call (the download and the commit).
 * For each wait, the key's budget left idle meanwhile (seconds of calls at the key's rate not
 * made): a wait with the budget full is the order's, one with the budget idle is lost outright.
 * Polls that found their task running are counted (calls over the minimum).
 *
 * Pure: runCase (throughput.ts) collects the job's calls from the sandbox's ledger, its versions
 * from the pipeline's change feed and the tokens' requested times from the limiter.
 */

/** A call of the job, from the sandbox's ledger, in ledger order. */
export interface JobCall {
  /** Its place in the ledger (orders it against the job's versions, which record the ledger's length). */
  index: number;
  time: number;
  operationId: string;
  errorCode: number;
  /** The task's drawn duration when this call started one (`startedWork`), ms. */
  startedMs?: number | undefined;
}

/** A committed version of the job, as the change feed saw it. */
export interface JobVersion {
  /** How many ledger entries there were when it was seen: it came before the call at that index. */
  seen: number;
  at: number;
  nextRunAt: number;
  tokenAt?: number | undefined;
}

export interface LastJobInput {
  label: string;
  /** The batch's start (times are printed from it). */
  startedAt: number;
  createdAt: number;
  finishedAt: number;
  calls: readonly JobCall[];
  versions: readonly JobVersion[];
  /** Every call the key answered (any job), ms, for the budget left idle. */
  keyCallTimes: readonly number[];
  /** The time a token reserved at `tokenAt` was asked for (the call's due time), when known. */
  requestedAt: (tokenAt: number) => number | undefined;
  /** The operations that poll (a call to one without `startedMs` polls the running task). */
  pollOperations: ReadonlySet<string>;
  qps: number;
  /** The code of a throttled answer. */
  throttledCode: number;
}

/** One task of the job: its start, true end, polls, and the lateness of the poll that found it done. */
export interface TaskView {
  operation: string;
  startAt: number;
  durationMs: number;
  /** Poll times, ms from the task's start; `done` on the first that found it done. */
  polls: { atMs: number; done: boolean; throttled: boolean }[];
  /** The done poll after the true end, ms (0 when no poll found it done). */
  lateMs: number;
  /** Of `lateMs`: the poll's due time (before a token pushed it) after the true end. */
  aimedLateMs: number;
  /** Of `lateMs`: past its due time (or past the true end when due before it): a wait for a token. */
  tokenLateMs: number;
  /** The key's budget left idle between the true end and the done poll, s of calls. */
  idleWhileLateS: number;
  /** From the done poll to the next task's start (the calls between), ms. */
  gapMs: number;
  /** The key's budget left idle in the gap, s of calls. */
  idleInGapS: number;
}

export interface LastJobView {
  jobMs: number;
  tasksMs: number;
  beforeFirstCallMs: number;
  idleBeforeFirstCallS: number;
  lateMs: number;
  aimedLateMs: number;
  tokenLateMs: number;
  gapsMs: number;
  afterLastCallMs: number;
  /** Polls that found their task running. */
  pollsRunning: number;
  calls: number;
  tasks: TaskView[];
}

/** The key's budget left idle in [from, to): calls the rate allows there not made, in seconds of calls. */
export function idleBudgetS(times: readonly number[], from: number, to: number, qps: number): number {
  if (to <= from || qps <= 0) return 0;
  const made = times.filter((time) => time >= from && time < to).length;
  return Math.max(0, ((to - from) / 1000) * qps - made) / qps;
}

/** The due time the job's call at `call` was made for: its last version before the call. */
function dueOf(input: LastJobInput, call: JobCall): number | undefined {
  let version: JobVersion | undefined;
  for (const v of input.versions) if (v.seen <= call.index) version = v;
  if (!version) return undefined;
  // A token reserved for the call moved `nextRunAt` to it: the due time is what the token was asked for.
  if (version.tokenAt !== undefined && version.tokenAt === version.nextRunAt)
    return input.requestedAt(version.tokenAt) ?? version.nextRunAt;
  return version.nextRunAt;
}

export function lastJobView(input: LastJobInput): LastJobView {
  const tasks: TaskView[] = [];
  let current: (TaskView & { endAt: number; doneAt?: number }) | undefined;
  const close = (nextStartAt: number) => {
    if (!current) return;
    if (current.doneAt !== undefined) {
      current.gapMs = nextStartAt - current.doneAt;
      current.idleInGapS = idleBudgetS(input.keyCallTimes, current.doneAt, nextStartAt, input.qps);
    }
    const { endAt: _endAt, doneAt: _doneAt, ...task } = current;
    tasks.push(task);
  };
  let pollsRunning = 0;
  const first = input.calls[0];
  for (const call of input.calls) {
    if (call.startedMs !== undefined) {
      close(call.time);
      current = {
        operation: shortName(call.operationId),
        startAt: call.time,
        durationMs: call.startedMs,
        endAt: call.time + call.startedMs,
        polls: [],
        lateMs: 0,
        aimedLateMs: 0,
        tokenLateMs: 0,
        idleWhileLateS: 0,
        gapMs: 0,
        idleInGapS: 0,
      };
      continue;
    }
    if (!current || !input.pollOperations.has(call.operationId) || current.doneAt !== undefined) continue;
    const throttled = call.errorCode === input.throttledCode;
    const done = !throttled && call.time >= current.endAt;
    current.polls.push({ atMs: call.time - current.startAt, done, throttled });
    if (!done) {
      if (!throttled) pollsRunning++;
      continue;
    }
    current.doneAt = call.time;
    current.lateMs = call.time - current.endAt;
    const due = dueOf(input, call) ?? call.time;
    current.aimedLateMs = Math.max(0, Math.min(call.time, due) - current.endAt);
    current.tokenLateMs = current.lateMs - current.aimedLateMs;
    current.idleWhileLateS = idleBudgetS(input.keyCallTimes, current.endAt, call.time, input.qps);
  }
  const last = input.calls.at(-1);
  close(last?.time ?? input.finishedAt);
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const firstAt = first?.time ?? input.createdAt;
  return {
    jobMs: input.finishedAt - input.createdAt,
    tasksMs: sum(tasks.map((task) => task.durationMs)),
    beforeFirstCallMs: firstAt - input.createdAt,
    idleBeforeFirstCallS: idleBudgetS(input.keyCallTimes, input.createdAt, firstAt, input.qps),
    lateMs: sum(tasks.map((task) => task.lateMs)),
    aimedLateMs: sum(tasks.map((task) => task.aimedLateMs)),
    tokenLateMs: sum(tasks.map((task) => task.tokenLateMs)),
    gapsMs: sum(tasks.map((task) => task.gapMs)),
    afterLastCallMs: input.finishedAt - (last?.time ?? input.finishedAt),
    pollsRunning,
    calls: input.calls.length,
    tasks,
  };
}

const shortName = (operationId: string) => operationId.split(/(?<=\d)(?=[A-Z])/)[0] ?? operationId;
const s = (ms: number) => (ms / 1000).toFixed(2);

/** The view as printed lines (two-space indent under the case's label). */
export function lastJobLines(input: LastJobInput): string[] {
  const view = lastJobView(input);
  const at = (ms: number) => s(ms - input.startedAt);
  const rest = view.jobMs - view.tasksMs;
  return [
    `  ${input.label}: the job that ended last: created ${at(input.createdAt)} s, ended ${at(input.finishedAt)} s; ` +
      `its time ${s(view.jobMs)} s = own tasks ${s(view.tasksMs)} + ${s(rest)}: before its first call ${s(view.beforeFirstCallMs)} ` +
      `(budget idle ${view.idleBeforeFirstCallS.toFixed(2)} s), polls after the true ends ${s(view.lateMs)} ` +
      `(aimed late ${s(view.aimedLateMs)}, token waits ${s(view.tokenLateMs)}), calls between tasks ${s(view.gapsMs)}, ` +
      `after its last call ${s(view.afterLastCallMs)}; ${view.calls} calls naming its task, ${view.pollsRunning} polls found it running`,
    ...view.tasks.map(
      (task) =>
        `    ${task.operation.padEnd(8)} start ${at(task.startAt).padStart(6)} s, true end +${s(task.durationMs)}; polls +${task.polls
          .map((poll) => `${s(poll.atMs)}${poll.done ? '*' : ''}${poll.throttled ? '(throttled)' : ''}`)
          .join(
            ' ',
          )}; late ${s(task.lateMs)} (aimed ${s(task.aimedLateMs)}, token ${s(task.tokenLateMs)}; budget idle ` +
        `${task.idleWhileLateS.toFixed(2)} s); to the next task ${s(task.gapMs)} (budget idle ${task.idleInGapS.toFixed(2)} s)`,
    ),
  ];
}
