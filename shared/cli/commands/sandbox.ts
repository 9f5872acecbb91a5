/**
 * `opflow sandbox [--port N] [--speed N] [--state FILE] [--drift SEED]`: the stand-in for the Open Platform API, in
 * the foreground until Ctrl-C. Point opflow at it with OPFLOW_BASE_URL. With `--state` its tasks
 * outlive it: started again on the same file, it continues them.
 */

import { errorMessage } from '../../errors/error-message';
import { scaledTaskDurations } from '../../runtime/local/sandbox-launch';
import { printSandboxBanner, SANDBOX_API_KEY, startSandbox } from '../../sandbox';
import type { CliContext } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

export interface SandboxCommandOptions {
  port: string;
  host: string;
  speed?: string | undefined;
  state?: string | undefined;
  drift?: string | undefined;
  json?: boolean | undefined;
}

export async function sandboxCommand(
  ctx: CliContext,
  options: SandboxCommandOptions,
): Promise<ExitCodeValue> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port must be a port number (0 to 65535), not "${options.port}"`, ExitCode.usage);
  }
  const speed = options.speed === undefined ? 1 : Number(options.speed);
  if (!(Number.isFinite(speed) && speed >= 1)) {
    throw new CliError(`--speed must be a number of at least 1, not "${options.speed}"`, ExitCode.usage);
  }
  const drift = driftSeedOf(options.drift);
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  try {
    sandbox = await startSandbox({
      port,
      host: options.host,
      ...(speed > 1 ? { taskDurations: scaledTaskDurations(speed) } : {}),
      ...(options.state ? { stateFile: options.state } : {}),
      ...(drift === undefined ? {} : { drift }),
    });
  } catch (error) {
    throw new CliError(`cannot start the sandbox: ${errorMessage(error)}`, ExitCode.environment);
  }
  if (options.json) {
    // One line, as `opflow serve --json`: a script reads where it listens from the first line.
    ctx.io.stdout.write(
      `${JSON.stringify({
        url: sandbox.url,
        apiKey: sandbox.apiKeys.includes(SANDBOX_API_KEY) ? SANDBOX_API_KEY : undefined,
        health: `${sandbox.url}/__sandbox/health`,
        ledger: `${sandbox.url}/__sandbox/ledger`,
        speed,
        stateFile: options.state,
        drift: drift ?? 'off',
      })}\n`,
    );
  } else {
    printSandboxBanner(sandbox, (text) => ctx.io.stdout.write(text));
    if (drift !== undefined)
      ctx.io.stdout.write(`  drift:   on (seed ${drift}): answers move between runs\n`);
    ctx.io.stdout.write(`  use it:  OPFLOW_BASE_URL=${sandbox.url} npx opflow run ...   (Ctrl-C stops it)\n`);
  }
  await new Promise<void>((resolve) => {
    const stop = ctx.io.onInterrupt(() => {
      stop();
      resolve();
    });
  });
  await sandbox.close();
  return ExitCode.ok;
}

/** `--drift`: a whole-number seed, or `off` (the default). */
function driftSeedOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim().toLowerCase() === 'off') return undefined;
  const seed = Number(value);
  if (value.trim() === '' || !Number.isInteger(seed)) {
    throw new CliError(`--drift must be a whole-number seed or "off", not "${value}"`, ExitCode.usage);
  }
  return seed;
}
