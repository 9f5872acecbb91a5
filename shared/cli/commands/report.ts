/**
 * `opflow report <jobId> [--print] [--format html|md|json|docx]`: where a finished job's report is
 * (report.html, report.md, report.docx, result.json, the images beside it and the attachments), or
 * the report itself.
 */
import { reportKeys } from '../../engine/report';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

export interface ReportOptions extends GlobalOptions {
  print?: boolean | undefined;
  format: string;
}

const formats = { html: 'html', md: 'markdown', markdown: 'markdown', json: 'result', docx: 'docx' } as const;

export async function reportCommand(
  ctx: CliContext,
  jobId: string,
  options: ReportOptions,
): Promise<ExitCodeValue> {
  const format = formats[options.format as keyof typeof formats];
  if (!format)
    throw new CliError(`--format must be html, md, json or docx, not "${options.format}"`, ExitCode.usage);
  const backend = await openBackend(ctx, options, 'records');
  try {
    const { store, reports } = backend.deps;
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
      if (format === 'docx' && ctx.io.stdout.isTTY)
        throw new CliError(
          '--print --format docx writes a Word file: redirect it (> report.docx), or drop --print for its path',
          ExitCode.usage,
        );
      const stored = await reports.get(keys[format]);
      if (!stored)
        throw new CliError(
          `the report file of job ${job.id} is missing (${keys[format]})`,
          ExitCode.notFound,
        );
      ctx.io.stdout.write(
        format === 'docx' ? Buffer.from(stored.body) : Buffer.from(stored.body).toString('utf8'),
      );
      return ExitCode.ok;
    }
    const linksUnder = (folder: string) =>
      Promise.all(
        job.outputs
          .filter((key) => key.startsWith(`reports/${job.id}/${folder}/`))
          .map((key) => reports.link(key)),
      );
    // The images result.json held as base64, kept as files beside the report (images/<n>.<ext>).
    const [images, attachments] = await Promise.all([linksUnder('images'), linksUnder('attachments')]);
    const links = {
      html: await reports.link(keys.html),
      markdown: await reports.link(keys.markdown),
      result: await reports.link(keys.result),
      // Reports written before Word reports existed have none.
      ...(job.outputs.includes(keys.docx) ? { docx: await reports.link(keys.docx) } : {}),
      images,
      attachments,
    };
    if (options.json) {
      writeJson(ctx.io, { id: job.id, status: job.status, ...links });
    } else {
      const lines = [
        `report    ${links.html}`,
        `markdown  ${links.markdown}`,
        ...(links.docx ? [`word      ${links.docx}`] : []),
        `data      ${links.result}`,
        ...images.map((path) => `image     ${path}`),
        ...attachments.map((path) => `attached  ${path}`),
      ];
      ctx.io.stdout.write(`${lines.join('\n')}\n`);
    }
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
