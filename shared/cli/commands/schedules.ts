/**
 * `opflow schedules` (list with next and last fire time and the last job's status),
 * `opflow schedules trigger <name>` (a job now), `opflow schedules backfill <name> --from --to`
 * (the jobs of past slots; slots that have one already keep it), `opflow schedules pause <name>
 * --reason` and `opflow schedules resume <name>` (kept in the schedule state store, which every
 * process firing the schedule reads). Schedules come from the config file; `opflow serve` fires
 * them locally, EventBridge Scheduler on aws (`--backend aws` reads and changes their state there).
 */
import type { Schedule } from '../../config/opflow-config';
import type { CapFigures } from '../../schedules/cost-cap';
import { pauseSchedule, resumeSchedule, SchedulePauseError } from '../../schedules/pause';
import { scheduleView } from '../../schedules/schedule-view';
import { backfillSchedule, triggerSchedule } from '../../schedules/scheduler';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { printable } from '../format';
import { readConfigFile } from '../serve-extras';

type Options = GlobalOptions & {
  config?: string | undefined;
  from?: string;
  to?: string;
  reason?: string | undefined;
};

/** "run 8 units; day 12 units: 9 spent in the last 24 hours (2 jobs)". */
export function describeCaps(caps: CapFigures): string {
  const parts: string[] = [];
  if (caps.maxUnitsPerRun !== undefined) parts.push(`per run ${caps.maxUnitsPerRun} units`);
  const spent = `${caps.spentLast24h} billed in the last 24 hours (${caps.jobsLast24h} jobs)`;
  if (caps.maxUnitsPerDay !== undefined)
    parts.push(
      `per day ${caps.maxUnitsPerDay} units, ${spent}${caps.dayCapFreesAt ? `, at the cap until ${caps.dayCapFreesAt}` : ''}`,
    );
  else parts.push(spent);
  return parts.join('; ');
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

async function pick(
  ctx: CliContext,
  options: Options,
  name?: string,
): Promise<{ schedules: Schedule[]; schedule?: Schedule }> {
  const { config, file } = await readConfigFile(ctx, options.config);
  if (name === undefined) return { schedules: config.schedules };
  const schedule = config.schedules.find((candidate) => candidate.name === name);
  if (!schedule) {
    const known = config.schedules.map((s) => s.name).join(', ') || 'none';
    throw new CliError(
      `no schedule "${name}" in ${file ?? 'opflow.config.json (there is no such file)'}; schedules: ${known}`,
      ExitCode.notFound,
    );
  }
  return { schedules: config.schedules, schedule };
}

/** The backend and its schedule state store (on aws: the SCHED# items of the stack's job table). */
async function openStates(ctx: CliContext, options: Options, purpose: 'records' | 'work') {
  const backend = await openBackend(ctx, options, purpose);
  return { backend, states: await backend.scheduleStates() };
}

export async function schedulesListCommand(ctx: CliContext, options: Options): Promise<ExitCodeValue> {
  const { schedules } = await pick(ctx, options);
  const { backend, states } = await openStates(ctx, options, 'records');
  try {
    const rows = [];
    for (const schedule of schedules) rows.push(await scheduleView(backend.deps, states, schedule));
    if (options.json) writeJson(ctx.io, { schedules: rows });
    else if (rows.length === 0) {
      ctx.io.stdout.write(
        'no schedules (declare them in opflow.config.json: see docs/guides/schedules-and-webhooks.md)\n',
      );
    } else {
      for (const row of rows) {
        ctx.io.stdout.write(
          `${row.name}  ${row.cron} (${row.timezone})  ${row.workflow}\n` +
            `  next: ${row.pause ? `paused${row.pause.by === 'config' ? ' in the config' : ''}: ${printable(row.pause.reason)}` : (row.next ?? 'never')}\n` +
            `  last: ${row.lastFired ?? 'never fired'}${row.lastJob ? `  job ${row.lastJob.id} ${row.lastJob.status}` : ''}` +
            `${row.skipped ? `  (${row.skipped} slots skipped)` : ''}\n` +
            (row.caps ? `  caps: ${describeCaps(row.caps)}\n` : ''),
        );
      }
    }
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}

export async function schedulesTriggerCommand(
  ctx: CliContext,
  name: string,
  options: Options,
): Promise<ExitCodeValue> {
  const { schedule } = await pick(ctx, options, name);
  const { backend, states } = await openStates(ctx, options, 'records');
  try {
    const { job } = await triggerSchedule(backend.deps, states, schedule!);
    if (options.json) writeJson(ctx.io, { schedule: name, jobId: job.id, status: job.status });
    else ctx.io.stdout.write(`${name}: job ${job.id} queued (opflow serve or opflow resume runs it)\n`);
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}

export async function schedulesPauseCommand(
  ctx: CliContext,
  name: string,
  options: Options,
  pause: boolean,
): Promise<ExitCodeValue> {
  const { schedule } = await pick(ctx, options, name);
  if (pause && !options.reason?.trim())
    throw new CliError('--reason is required: say why (people see it beside the schedule)', ExitCode.usage);
  const { backend, states } = await openStates(ctx, options, 'records');
  try {
    try {
      if (pause) await pauseSchedule(backend.deps, states, schedule!, options.reason!);
      else await resumeSchedule(backend.deps, states, schedule!);
    } catch (error) {
      if (error instanceof SchedulePauseError) throw new CliError(error.message, ExitCode.usage);
      throw error;
    }
    const view = await scheduleView(backend.deps, states, schedule!);
    if (options.json) writeJson(ctx.io, { schedule: view });
    else
      ctx.io.stdout.write(
        pause
          ? `${name}: paused (${printable(view.pause?.reason ?? '')}); its slots are skipped until opflow schedules resume ${name}\n`
          : `${name}: resumed; next slot ${view.next ?? 'never'}\n`,
      );
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}

function parseTime(value: string | undefined, flag: string): number {
  const ms = value === undefined ? Number.NaN : Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new CliError(
      `${flag} must be a date or time, e.g. 2026-01-01 or 2026-01-01T06:00:00Z (got "${value ?? ''}")`,
      ExitCode.usage,
    );
  }
  return ms;
}

export async function schedulesBackfillCommand(
  ctx: CliContext,
  name: string,
  options: Options,
): Promise<ExitCodeValue> {
  const { schedule } = await pick(ctx, options, name);
  const from = parseTime(options.from, '--from');
  const to = parseTime(options.to, '--to');
  if (to < from) throw new CliError('--to must not be before --from', ExitCode.usage);
  const { backend, states } = await openStates(ctx, options, 'records');
  try {
    if (to > backend.deps.clock.now()) throw new CliError('--to must not be in the future', ExitCode.usage);
    let results: Awaited<ReturnType<typeof backfillSchedule>>;
    try {
      results = await backfillSchedule(backend.deps, states, schedule!, from, to);
    } catch (error) {
      if (error instanceof RangeError) throw new CliError(error.message, ExitCode.usage);
      throw error;
    }
    if (options.json)
      writeJson(ctx.io, { schedule: name, slots: results.map((r) => ({ ...r, slot: iso(r.slot) })) });
    else {
      for (const result of results) {
        ctx.io.stdout.write(
          `${iso(result.slot)}  job ${result.jobId}${result.created ? '' : ' (already there)'}\n`,
        );
      }
      const created = results.filter((r) => r.created).length;
      ctx.io.stdout.write(
        `${results.length} slots, ${created} new jobs (opflow serve or opflow resume runs them)\n`,
      );
    }
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
