/**
 * `opflow doctor`: checks that this setup can run jobs, each check ok, warn or fail with its fix.
 * Local: the places opflow writes (the database's folder, the reports folder), the key (one patent
 * count, the cheapest call of the workflows; or the built-in sandbox, said plainly) and its rate.
 * aws: the stack's outputs, the job table, the work queue and its dead-letter queue, the report
 * bucket, every tenant's API key secret (that it holds a key; never the key) and, from the stack's
 * outputs file, the account: the alarm topic's confirmed subscription, the functions' concurrency
 * against the account's, their recursion settings. Exit code 5 when a check fails. Secrets are never printed.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { keyFingerprint } from '../../engine/runner';
import { errorMessage } from '../../errors/error-message';
import type { Backend, HealthCheck } from '../../runtime/backend';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { ExitCode, type ExitCodeValue } from '../exit-codes';

export type DoctorCheck = HealthCheck;

const ok = (name: string, detail: string): DoctorCheck => ({ name, status: 'ok', detail });
const warn = (name: string, detail: string, fix: string): DoctorCheck => ({
  name,
  status: 'warn',
  detail,
  fix,
});
const fail = (name: string, detail: string, fix: string): DoctorCheck => ({
  name,
  status: 'fail',
  detail,
  fix,
});

export async function doctorCommand(ctx: CliContext, options: GlobalOptions): Promise<ExitCodeValue> {
  const checks = options.backend === 'aws' ? await awsChecks(ctx, options) : await localChecks(ctx, options);
  const failed = checks.some((check) => check.status === 'fail');
  const exitCode = failed ? ExitCode.environment : ExitCode.ok;
  if (options.json) writeJson(ctx.io, { backend: options.backend ?? 'local', checks, exitCode });
  else {
    for (const check of checks) {
      ctx.io.stdout.write(`${check.status.padEnd(4)}  ${check.name}: ${check.detail}\n`);
      if (check.fix) ctx.io.stdout.write(`      fix: ${check.fix}\n`);
    }
  }
  return exitCode;
}

/**
 * Whether opflow can create files in `folder`: the folders missing up to it are made one level at a
 * time, a file is written and everything made is removed again. Never mkdir's recursive mode: on a
 * filesystem that answers a missing path oddly (`/proc/x`) Node's recursive mkdir loops for ever.
 */
function writable(name: string, folder: string, shownAs: string): DoctorCheck {
  let existing = folder;
  const missing: string[] = [];
  while (!existsSync(existing) && dirname(existing) !== existing) {
    missing.unshift(existing);
    existing = dirname(existing);
  }
  const made: string[] = [];
  try {
    accessSync(existing, constants.W_OK);
    for (const level of missing) {
      mkdirSync(level);
      made.push(level);
    }
    const probe = resolve(folder, `.opflow-doctor-${randomBytes(4).toString('hex')}`);
    writeFileSync(probe, '');
    rmSync(probe);
    return ok(name, `${shownAs} is writable`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(
      name,
      `${shownAs} cannot be written (${code ?? errorMessage(error)})`,
      code === 'ENOENT' || code === 'EROFS'
        ? `${existing} takes no new folders or files (a read-only or virtual filesystem): choose a folder on a writable disk`
        : `make ${existing} writable for this user, or choose another place`,
    );
  } finally {
    for (const level of made.reverse()) rmSync(level, { recursive: true, force: true });
  }
}

async function localChecks(ctx: CliContext, options: GlobalOptions): Promise<DoctorCheck[]> {
  const env = ctx.io.env;
  const db = options.db ?? env.OPFLOW_DB?.trim() ?? '.opflow/opflow.db';
  const out = options.out ?? env.OPFLOW_OUT?.trim() ?? 'opflow-out';
  const checks = [
    writable(
      'database',
      dirname(resolve(ctx.io.cwd, db)),
      `the database's folder (${dirname(db)}, --db or OPFLOW_DB)`,
    ),
    writable('reports', resolve(ctx.io.cwd, out), `the reports folder (${out}, --out or OPFLOW_OUT)`),
  ];
  if (checks.some((check) => check.status === 'fail')) return checks;
  mkdirSync(dirname(resolve(ctx.io.cwd, db)), { recursive: true });
  let pipeline: Backend;
  try {
    pipeline = await openBackend(ctx, { ...options, quiet: true }, 'work');
  } catch (error) {
    return [...checks, fail('configuration', errorMessage(error), 'fix the setting it names')];
  }
  try {
    checks.push(...(await keyChecks(pipeline)));
  } finally {
    await pipeline.close();
  }
  return checks;
}

/** One patent count with the default tenant's key (or the sandbox's), and the key's rate. */
async function keyChecks(pipeline: Backend): Promise<DoctorCheck[]> {
  const sandbox = pipeline.work.where === 'here' ? pipeline.work.sandbox : undefined;
  const apiKey = await pipeline.deps.keys.getKey('default');
  if (!apiKey)
    return [
      fail('key', 'no API key for the default tenant', 'set OPFLOW_API_KEY (or unset it to use the sandbox)'),
    ];
  const checks: DoctorCheck[] = [];
  if (sandbox)
    checks.push(
      warn(
        'key',
        `the built-in sandbox is in use (no OPFLOW_API_KEY): jobs get simulated data, not real publications`,
        'set OPFLOW_API_KEY to your Open Platform key to run against the platform',
      ),
    );
  const started = Date.now();
  try {
    await pipeline.deps.client.request(
      'p001PatentQuerySearchCount',
      { body: { query_text: 'TTL:(battery)' } },
      { apiKey },
    );
    checks.push(
      ok(
        'key call',
        `${sandbox ? 'the sandbox' : 'the key'} answered one patent count (p001, the cheapest call of the workflows) in ${Date.now() - started} ms`,
      ),
    );
  } catch (error) {
    const kind = (error as { kind?: string }).kind;
    checks.push(
      fail(
        'key call',
        `one patent count (p001) failed: ${errorMessage(error)}`,
        kind === 'auth' || kind === 'forbidden'
          ? 'the platform refused the key: check OPFLOW_API_KEY'
          : kind === 'quota-exhausted'
            ? "the key's quota is used up: add units on the Open Platform"
            : 'check the network and OPFLOW_BASE_URL',
      ),
    );
  }
  const configured = pipeline.deps.rateLimiter.budget
    ? await pipeline.deps.rateLimiter.budget(keyFingerprint(apiKey), Date.now())
    : undefined;
  checks.push(
    configured
      ? ok(
          'rate',
          `the key's calls run at ${round(configured.ratePerSecond)} per second now (OPFLOW_QPS or --qps sets the ceiling; throttling slows it, success speeds it up again)`,
        )
      : ok('rate', 'the rate limiter keeps no readable rate for this key yet'),
  );
  return checks;
}

const round = (value: number) => Math.round(value * 100) / 100;

async function awsChecks(ctx: CliContext, options: GlobalOptions): Promise<DoctorCheck[]> {
  let backend: Backend;
  try {
    backend = await openBackend(ctx, { ...options, quiet: true }, 'records');
  } catch (error) {
    return [
      fail(
        'stack outputs',
        errorMessage(error),
        'set OPFLOW_STACK_OUTPUTS to the file `cdk deploy --outputs-file` wrote (or the variables it names)',
      ),
    ];
  }
  try {
    return backend.work.where === 'elsewhere' ? await backend.work.checks() : [];
  } finally {
    await backend.close();
  }
}
