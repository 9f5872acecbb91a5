/**
 * Start-up of the `opflow` command: how long a whole process takes for commands whose own work is a
 * few milliseconds, as a ratio to `node -e 0` (Node's own start-up) measured in the same rounds.
 *
 * Each round runs every case once, in turn (so noise from the shared machine falls on all of them
 * alike); the table shows each case's median and its ratio to the median of `node -e 0`. The cases
 * run the real bin/opflow.js in a child process on an empty database in a temporary folder:
 *
 * - `--version`, `--help`: parse the command line and print.
 * - `status <unknown id>`: open the SQLite database, look the job up, say there is none (exit 4).
 * - `list --json`: open the database and list (nothing).
 * - `status (from source)`: the same as `status`, run from the TypeScript sources through tsx
 *   (`OPFLOW_FROM_SOURCE=1`), which is how every command started before the CLI was bundled.
 *
 *   npx tsx bench/startup.ts [--rounds=15]
 *
 * Nothing here asserts a time. See bench/startup.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { ensureCliBuilt } from '../scripts/build-cli.mjs';

const bin = fileURLToPath(new URL('../bin/opflow.js', import.meta.url));

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
  /** The exit code the command gives when it worked as meant. */
  exitCode: number;
}

const unknownJob = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
const cases: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'], exitCode: 0 },
  { name: 'opflow --version', args: [bin, '--version'], exitCode: 0 },
  { name: 'opflow --help', args: [bin, '--help'], exitCode: 0 },
  { name: 'opflow status <id>', args: [bin, 'status', unknownJob], exitCode: 4 },
  { name: 'opflow list --json', args: [bin, 'list', '--json'], exitCode: 0 },
  {
    name: 'opflow status <id> (from source)',
    args: [bin, 'status', unknownJob],
    env: { OPFLOW_FROM_SOURCE: '1' },
    exitCode: 4,
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' } } });
  const rounds = z.coerce.number().int().min(1).max(1_000).parse(values.rounds);
  const { reason } = await ensureCliBuilt();
  if (reason) process.stdout.write(`built the CLI first (${reason})\n`);

  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-startup-'));
  const env: NodeJS.ProcessEnv = { ...process.env, OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: dir };
  for (const name of Object.keys(env))
    if (name.startsWith('OPFLOW_') && !/^OPFLOW_(DB|OUT)$/.test(name)) delete env[name];
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  try {
    // One untimed round: the database file is created, and the file cache is warm for every case.
    for (const c of cases) run(c, env, dir);
    for (let round = 0; round < rounds; round++) {
      for (const c of cases) times.get(c.name)!.push(run(c, env, dir));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const base = median(times.get('node -e 0')!);
  process.stdout.write(
    `Start-up of opflow (Node ${process.version}, ${rounds} rounds, median per case)\n\n` +
      `| case | median ms | × node -e 0 |\n|---|---:|---:|\n`,
  );
  for (const c of cases) {
    const m = median(times.get(c.name)!);
    process.stdout.write(`| ${c.name} | ${m.toFixed(0)} | ${(m / base).toFixed(1)} |\n`);
  }
}

/** Runs one case as a child process; its wall time in milliseconds. Throws when it did not work. */
function run(c: Case, env: NodeJS.ProcessEnv, cwd: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, c.args, { env: { ...env, ...c.env }, cwd, encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (result.status !== c.exitCode) {
    throw new Error(
      `${c.name} exited ${result.status} (expected ${c.exitCode}):\n${result.stdout}${result.stderr}`,
    );
  }
  return elapsed;
}

await main();
