/**
 * `npm run bench:aws-local`: the README's main job (six novelty checks of examples/disclosures) on
 * both backends side by side in one run, through the real `bin/opflow.js`: locally (a fresh database,
 * the built-in sandbox) and on `npm run aws-local` (the bundled functions on the emulators, the same
 * sandbox speed). Prints each run's wall time and upstream calls, and the ratio aws-local / local.
 *
 *   npm run bench:aws-local [-- --rounds 1] [--workers 5] [--sandbox-speed 30] [--json]
 *
 * Rounds alternate local and aws-local, so both meet the same machine load; the figures are medians.
 * Every run starts new jobs (`--fresh`: a repeat of the same inputs would otherwise join the jobs an
 * earlier round finished, on the one aws-local stage), and each run's row says the machine's load.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { jobTimelines, timelineSummary } from './aws-local-timeline';

const root = resolve(import.meta.dirname, '..');
const opflow = join(root, 'bin', 'opflow.js');
const disclosures = join(root, 'examples', 'disclosures');

const optionsSchema = z.object({
  rounds: z.coerce.number().int().min(1).max(20),
  workers: z.coerce.number().int().min(1).max(16).optional(),
  sandboxSpeed: z.coerce.number().min(1).max(10_000),
  json: z.boolean(),
});

interface Run {
  backend: 'local' | 'aws-local';
  seconds: number;
  jobs: number;
  succeeded: number;
  calls: number;
  jobIds: string[];
  /** The 1-minute load average when the run started and when it ended. */
  load: [number, number];
}

function readOptions() {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '1' },
      workers: { type: 'string' },
      'sandbox-speed': { type: 'string', default: '30' },
      json: { type: 'boolean', default: false },
    },
  });
  return optionsSchema.parse({
    rounds: values.rounds,
    workers: values.workers,
    sandboxSpeed: values['sandbox-speed'],
    json: values.json,
  });
}

/** A clean environment: no key (the built-in sandbox), no settings of the caller's shell. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith('OPFLOW_') || name.startsWith('AWS_')) delete env[name];
  return { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: '1', ...extra };
}

/** Runs the main job once through bin/opflow.js; the wall time of the whole command. */
function runMainJob(backend: Run['backend'], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  const args = [opflow, ...(backend === 'aws-local' ? ['--backend', 'aws'] : []), 'run', 'novelty-check'];
  const started = performance.now();
  const loadAtStart = Number(loadavg()[0]!.toFixed(1));
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...args, disclosures, '--fresh', '--json'], { env, cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      // Exit code 1 is a job that failed: its run still counts (the table shows succeeded / jobs).
      if (code !== 0 && code !== 1)
        return fail(new Error(`${backend}: opflow exited ${code}\n${stderr.slice(-2000)}`));
      const answer = JSON.parse(stdout) as {
        jobs: { id: string; status: string; usage?: { calls?: number } }[];
      };
      done({
        backend,
        seconds,
        load: [loadAtStart, Number(loadavg()[0]!.toFixed(1))],
        jobIds: answer.jobs.map((job) => job.id),
        jobs: answer.jobs.length,
        succeeded: answer.jobs.filter((job) => job.status === 'SUCCEEDED').length,
        calls: answer.jobs.reduce((sum, job) => sum + (job.usage?.calls ?? 0), 0),
      });
    });
  });
}

/** Starts `npm run aws-local` in `dir`; resolves with its environment once it says it is ready. */
async function startAwsLocal(
  dir: string,
  options: { workers?: number | undefined; sandboxSpeed: number },
): Promise<{ env: Record<string, string>; child: ChildProcess }> {
  const args = [
    '--import',
    pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href,
    join(root, 'scripts', 'aws-local.ts'),
    '--dir',
    join(dir, 'state'),
    '--timeline',
    join(dir, 'state', 'timeline.jsonl'),
    '--sandbox-speed',
    String(options.sandboxSpeed),
    ...(options.workers ? ['--workers', String(options.workers)] : []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: cleanEnv({}),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((ready, fail) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (/aws-local: ready/.test(stderr)) ready();
      if (/aws-local: failed/.test(stderr)) fail(new Error(stderr));
    });
    child.on('exit', (code) => fail(new Error(`aws-local exited ${code}:\n${stderr}`)));
  });
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(dir, 'state', 'aws-local.env'), 'utf8').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return { env, child };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Each round's aws-local / local ratio. */
const roundRatios = (runs: Run[]) =>
  runs.flatMap((run, index) =>
    run.backend === 'aws-local' && runs[index - 1]
      ? [`${(run.seconds / runs[index - 1]!.seconds).toFixed(2)}x`]
      : [],
  );

/** The lowest and highest 1-minute load average seen at a run's start or end. */
const loadRange = (runs: Run[]) => {
  const loads = runs.flatMap((run) => run.load);
  return `${Math.min(...loads)} to ${Math.max(...loads)}`;
};

async function main(): Promise<void> {
  const options = readOptions();
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-aws-local-'));
  const say = (line: string) => process.stderr.write(`bench:aws-local: ${line}\n`);
  let awsLocal: ChildProcess | undefined;
  // Interrupted (Ctrl-C, a timeout's SIGTERM): stop aws-local and its emulators, then go.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      const child = awsLocal;
      const gone = () => {
        rmSync(dir, { recursive: true, force: true });
        process.exit(130);
      };
      if (!child || child.exitCode !== null) return gone();
      child.once('exit', gone);
      child.kill('SIGTERM');
    });
  try {
    say('starting aws-local (bundles the functions, starts the emulators)');
    const started = await startAwsLocal(dir, options);
    awsLocal = started.child;
    const runs: Run[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      const localDir = mkdtempSync(join(dir, `local-${round}-`));
      const local = await runMainJob(
        'local',
        cleanEnv({ OPFLOW_SANDBOX_SPEED: String(options.sandboxSpeed) }),
        localDir,
      );
      say(`round ${round}: local ${local.seconds.toFixed(1)} s (load ${local.load.join(' to ')})`);
      const aws = await runMainJob('aws-local', cleanEnv(started.env), dir);
      say(`round ${round}: aws-local ${aws.seconds.toFixed(1)} s (load ${aws.load.join(' to ')})`);
      runs.push(local, aws);
    }
    const of = (backend: Run['backend']) => runs.filter((run) => run.backend === backend);
    const summary = (backend: Run['backend']) => ({
      backend,
      seconds: Number(median(of(backend).map((run) => run.seconds)).toFixed(1)),
      succeeded: of(backend)
        .map((run) => `${run.succeeded}/${run.jobs}`)
        .join(' '),
      calls: median(of(backend).map((run) => run.calls)),
    });
    const local = summary('local');
    const aws = summary('aws-local');
    const ratio = Number((aws.seconds / local.seconds).toFixed(2));
    const timelines = jobTimelines(
      readFileSync(join(dir, 'state', 'timeline.jsonl'), 'utf8'),
      readFileSync(join(dir, 'state', 'functions.log'), 'utf8'),
    );
    const awsRuns = of('aws-local');
    const perRun = awsRuns.map((run) =>
      timelineSummary(
        timelines.filter((job) => run.jobIds.includes(job.jobId)),
        run.seconds,
      ),
    );
    const where = perRun[Math.floor(perRun.length / 2)]!;
    if (options.json)
      process.stdout.write(
        `${JSON.stringify({ options, local, awsLocal: aws, ratio, awsLocalTimeline: perRun, runs })}\n`,
      );
    else {
      process.stdout.write(
        `main job: 6 novelty checks of examples/disclosures, sandbox speed ${options.sandboxSpeed}, ${options.rounds} round(s), medians\n` +
          `backend    seconds  succeeded  calls\n` +
          [local, aws]
            .map(
              (row) =>
                `${row.backend.padEnd(10)} ${String(row.seconds).padStart(7)}  ${row.succeeded.padEnd(9)}  ${row.calls}`,
            )
            .join('\n') +
          `\nratio aws-local / local: ${ratio}x (rounds: ${roundRatios(runs).join(', ')}; 1-minute load ${loadRange(runs)})\n` +
          `aws-local, mean per job (s): ${where.messages} messages, ${where.span} from first send to last step, of which ` +
          `handlers ${where.handler}, waits asked ${where.asked}, waits beyond due ${where.beyond}; ` +
          `the command outside the jobs ${where.outside}\n`,
      );
    }
  } finally {
    awsLocal?.kill('SIGTERM');
    if (awsLocal && awsLocal.exitCode === null)
      await new Promise((resolve) => awsLocal?.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
