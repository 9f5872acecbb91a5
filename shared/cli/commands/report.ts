/**
 * `opflow report <jobId> [--print] [--format html|md|json]`: where a finished job's report is, or
 * the report itself.
 */
import { reportKeys } from '../../engine/report';
import { type CliContext, type GlobalOptions, openPipeline, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

export interface ReportOptions extends GlobalOptions {
  print?: boolean | undefined;
  format: string;
}

const formats = { html: 'html', md: 'markdown', markdown: 'markdown', json: 'result' } as const;

export async function reportCommand(
  ctx: CliContext,
  jobId: string,
  options: ReportOptions,
): Promise<ExitCodeValue> {
  const format = formats[options.format as keyof typeof formats];
  if (!format)
    throw new CliError(`--format must be html, md or json, not "${options.format}"`, ExitCode.usage);
  const pipeline = await openPipeline(ctx, options, 'records');
  try {
    const { store, reports } = pipeline.deps;
    const job = await store.get(jobId);
    if (!job) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
    const keys = reportKeys(job.id);
    if (!job.outputs.includes(keys.markdown)) {
      const why =
        job.status === 'FAILED'
          ? `it failed at ${job.lastError?.step ?? job.step}: ${job.lastError?.message ?? 'unknown error'}`
          : `it is ${job.status} at step ${job.step}`;
      throw new CliError(`job ${job.id} has no report: ${why}`, ExitCode.notFound);
    }
    if (options.print) {
      const stored = await reports.get(keys[format]);
      if (!stored)
        throw new CliError(
          `the report file of job ${job.id} is missing (${keys[format]})`,
          ExitCode.notFound,
        );
      ctx.io.stdout.write(Buffer.from(stored.body).toString('utf8'));
      return ExitCode.ok;
    }
    const attachmentPrefix = `reports/${job.id}/attachments/`;
    const attachments = await Promise.all(
      job.outputs.filter((key) => key.startsWith(attachmentPrefix)).map((key) => reports.link(key)),
    );
    const links = {
      html: await reports.link(keys.html),
      markdown: await reports.link(keys.markdown),
      result: await reports.link(keys.result),
      attachments,
    };
    if (options.json) {
      writeJson(ctx.io, { id: job.id, status: job.status, ...links });
    } else {
      const lines = [
        `report    ${links.html}`,
        `markdown  ${links.markdown}`,
        `data      ${links.result}`,
        ...attachments.map((path) => `attached  ${path}`),
      ];
      ctx.io.stdout.write(`${lines.join('\n')}\n`);
    }
    return ExitCode.ok;
  } finally {
    await pipeline.close();
  }
}
