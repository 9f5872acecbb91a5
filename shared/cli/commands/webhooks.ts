/**
 * `opflow webhooks`: the webhook sources of the config file with their caps, the last 24 hours'
 * spend and their state (open, or capped until the spend is below the day cap).
 * `opflow webhooks sign <source> <file>`: signs a file as a Standard Webhooks delivery with the
 * source's secret (OPFLOW_WEBHOOK_SECRET_<SOURCE>) and prints the curl command that sends it to
 * `opflow serve` (or the aws API with --url). The secret itself is never printed.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ulid } from 'ulid';
import { signCallback } from '../../callbacks/send';
import { parseSigningSecret, SigningSecretError } from '../../config/signing-secrets';
import { errorMessage } from '../../errors/error-message';
import { localSecretSources, webhookSourceViews } from '../../http/webhook-sources';
import { webhookSecretVariable, webhookSourcePattern } from '../../http/webhooks';
import type { CliContext, GlobalOptions } from '../context';
import { openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { printable } from '../format';
import { readConfigFile } from '../serve-extras';
import { describeCaps } from './schedules';

/** The `whsec_` form of the source's secret, or a usage error naming the variable. */
function signingSecret(variable: string, value: string): string {
  try {
    return parseSigningSecret(value, variable);
  } catch (error) {
    if (error instanceof SigningSecretError) throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export async function webhooksSignCommand(
  ctx: CliContext,
  source: string,
  file: string,
  options: GlobalOptions & { url: string; id?: string | undefined },
): Promise<ExitCodeValue> {
  if (!webhookSourcePattern.test(source)) {
    throw new CliError(
      `source must be lower-case letters, digits, "-" or "_" (got "${source}")`,
      ExitCode.usage,
    );
  }
  const variable = webhookSecretVariable(source);
  const secret = ctx.io.env[variable]?.trim();
  if (!secret)
    throw new CliError(`${variable} is not set: it holds the source's signing secret`, ExitCode.usage);
  const key = signingSecret(variable, secret);
  const path = resolve(ctx.io.cwd, file);
  let body: Buffer;
  try {
    body = readFileSync(path);
  } catch (error) {
    throw new CliError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}`,
      ExitCode.usage,
    );
  }
  let base: URL;
  try {
    base = new URL(options.url);
  } catch {
    throw new CliError(`--url must be a URL (got "${options.url}")`, ExitCode.usage);
  }
  const messageId = options.id ?? `msg_${ulid()}`;
  const headers = signCallback({
    messageId,
    body: body.toString('utf8'),
    secret: key,
    timestampSeconds: Math.floor(Date.now() / 1000),
  });
  const url = new URL(`webhooks/${source}`, base.href.endsWith('/') ? base.href : `${base.href}/`).href;
  if (options.json) {
    writeJson(ctx.io, { url, headers, file: path });
    return ExitCode.ok;
  }
  const lines = [
    `curl -sS -X POST ${quote(url)}`,
    `  -H 'content-type: application/json'`,
    ...Object.entries(headers).map(([name, value]) => `  -H ${quote(`${name}: ${value}`)}`),
    `  --data-binary @${quote(path)}`,
  ];
  ctx.io.stdout.write(`${lines.join(' \\\n')}\n`);
  ctx.io.stderr.write(
    "opflow: the signature is valid within the source's tolerance of now (default 5 minutes; webhook-timestamp)\n",
  );
  return ExitCode.ok;
}

/** `opflow webhooks`: each source, its caps and spend, and whether it is capped (and until when). */
export async function webhooksListCommand(
  ctx: CliContext,
  options: GlobalOptions & { config?: string | undefined },
): Promise<ExitCodeValue> {
  const { config } = await readConfigFile(ctx, options.config);
  const backend = await openBackend(ctx, options, 'records');
  try {
    const sources = await webhookSourceViews(backend.deps, config.webhooks, {
      deliveries: await backend.webhookDeliveries(),
      secretSources: localSecretSources(ctx.io.env),
    });
    if (options.json) {
      writeJson(ctx.io, { sources });
      return ExitCode.ok;
    }
    if (sources.length === 0) {
      ctx.io.stdout.write(
        'no webhook sources (declare them under "webhooks" in opflow.config.json: see docs/guides/schedules-and-webhooks.md)\n',
      );
      return ExitCode.ok;
    }
    for (const source of sources) {
      ctx.io.stdout.write(
        `${source.name}  ${source.workflow}  tenant ${source.tenant}\n` +
          `  state: ${source.state === 'capped' ? `capped: ${printable(source.reason ?? '')}` : 'open'}\n` +
          `  ${source.caps.maxUnitsPerRun === undefined && source.caps.maxUnitsPerDay === undefined ? 'no caps' : 'caps'}: ${describeCaps(source.caps)}\n` +
          (source.lastDelivery
            ? `  last delivery: ${source.lastDelivery.at} HTTP ${source.lastDelivery.status}${source.lastDelivery.error ? ` ${source.lastDelivery.error.code}` : ''}\n`
            : ''),
      );
    }
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
