/**
 * `opflow operations [--group <g>] [<words...>]`: the platform's operations (all 356 of the
 * catalogue) with their parameters; one named operation is shown in full (each parameter and field
 * with its description, paging, and a request to start from).
 */
import { exampleRequest } from '../../openplatform/operation-example';
import { loadOperationDetails, loadShapeTables } from '../../openplatform/operation-schemas';
import type { OperationDetails, OperationRow } from '../../openplatform/operation-types';
import {
  allOperations,
  findGroup,
  lookupOperation,
  operationGroups,
  searchOperations,
} from '../../openplatform/operations';
import { type CliContext, type GlobalOptions, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

export interface OperationsOptions extends GlobalOptions {
  group?: string | undefined;
}

export async function operationsCommand(
  ctx: CliContext,
  words: string[],
  options: OperationsOptions,
): Promise<ExitCodeValue> {
  let group: string | undefined;
  if (options.group !== undefined) {
    group = findGroup(options.group);
    if (!group) {
      const names = operationGroups().map((entry) => entry.group.trim());
      throw new CliError(`--group: no group "${options.group}"; groups: ${names.join(', ')}`, ExitCode.usage);
    }
  }
  // One operation named exactly: show it in full.
  if (group === undefined && words.length === 1) {
    const found = lookupOperation(words[0] as string);
    if (found.ok) return showOperation(ctx, found.operation, options);
  }
  const rows = searchOperations({ group, words });
  if (rows.length === 0) {
    throw new CliError(
      `no operation matches ${[group && `group "${group.trim()}"`, words.length && `"${words.join(' ')}"`]
        .filter(Boolean)
        .join(' and ')}`,
      ExitCode.notFound,
    );
  }
  if (options.json) {
    writeJson(ctx.io, rows);
    return ExitCode.ok;
  }
  const out: string[] = [];
  const width = Math.max(...rows.map((row) => label(row).length));
  // One header per group, in the order groups first appear: the catalogue interleaves them, and a
  // group's name may carry stray spaces in some of its operations.
  const byGroup = new Map<string, typeof rows>();
  for (const row of rows) {
    const name = row.group.trim();
    byGroup.set(name, [...(byGroup.get(name) ?? []), row]);
  }
  for (const [name, members] of byGroup) {
    out.push('', `${name}:`);
    for (const row of members) {
      out.push(`  ${label(row).padEnd(width)}  ${row.method.padEnd(6)} ${row.summary}`);
      const takes = takesLine(row);
      if (takes) out.push(`      ${takes}`);
    }
  }
  const groups = byGroup.size;
  out.push(
    '',
    `${rows.length} of ${allOperations().length} operations in ${groups} group${groups === 1 ? '' : 's'}` +
      ' (* required). opflow operations <id> shows one in full; opflow call <id> calls it.',
  );
  ctx.io.stdout.write(`${out.join('\n').trimStart()}\n`);
  return ExitCode.ok;
}

/** `p002 p002PatentQuerySearch`, or the id alone when it has no short id. */
function label(row: OperationRow): string {
  return row.shortId ? `${row.shortId.padEnd(8)} ${row.operationId}` : `${''.padEnd(8)} ${row.operationId}`;
}

function takesLine(row: OperationRow): string {
  const parts: string[] = [];
  for (const where of ['path', 'query', 'header'] as const) {
    const names = row.parameters
      .filter((parameter) => parameter.in === where)
      .map((parameter) => `${parameter.name}${parameter.required ? '*' : ''}`);
    if (names.length) parts.push(`${where}: ${names.join(', ')}`);
  }
  if (row.bodyFields.length) parts.push(`body: ${row.bodyFields.join(', ')}`);
  return parts.join(' | ');
}

async function showOperation(
  ctx: CliContext,
  row: OperationRow,
  options: GlobalOptions,
): Promise<ExitCodeValue> {
  const details = (await loadOperationDetails())[row.operationId];
  const tables = await loadShapeTables();
  const example = exampleRequest(
    row,
    details,
    tables.definitions,
    tables.operationShapes[row.operationId]?.body,
  );
  if (options.json) {
    writeJson(ctx.io, { ...row, details, example });
    return ExitCode.ok;
  }
  const out = [
    `${row.operationId}${row.shortId ? ` (${row.shortId})` : ''}: ${row.summary}`,
    `  ${row.method} ${row.path}`,
    `  group: ${row.group.trim()}`,
    `  request: ${describeRequestType(row)}`,
    `  answer: ${row.stream ? 'an event stream' : row.answer === 'envelope' ? 'the data of the envelope' : 'a plain object'}; ${
      row.effect === 'read'
        ? 'a read (safe to repeat)'
        : 'may create or change something (not repeated blindly)'
    }`,
  ];
  if (row.paging) {
    const paging = row.paging;
    out.push(
      `  paged: ${paging.param} (${paging.style === 'offset' ? 'an offset' : 'a page number from 1'})${
        paging.sizeParam ? `, size ${paging.sizeParam}` : ''
      }; results in ${paging.items}${paging.total ? `, total in ${paging.total}` : ''}`,
    );
  }
  out.push(...parameterLines(row, details), ...bodyLines(details));
  out.push('', 'A request to start from (required fields only):', `  ${callLine(row, example)}`);
  if (row.workflow)
    out.push('', "One of the operations opflow's workflows use: its schema adds limits and enumerations.");
  ctx.io.stdout.write(`${out.join('\n')}\n`);
  return ExitCode.ok;
}

function describeRequestType(row: OperationRow): string {
  if (row.bodyEncoding === 'none') return 'no body';
  if (row.bodyEncoding === 'multipart') return 'multipart/form-data (file fields: give a local file path)';
  if (row.requestContentType === 'text/event-stream')
    return 'JSON (the description says text/event-stream, a known defect)';
  return 'a JSON body';
}

function parameterLines(row: OperationRow, details: OperationDetails | undefined): string[] {
  if (row.parameters.length === 0) return [];
  const lines = ['', 'Parameters (--query name=value):'];
  for (const parameter of row.parameters) {
    const note = details?.parameters[parameter.name];
    const example = note?.example === undefined ? '' : ` e.g. ${JSON.stringify(note.example)}`;
    lines.push(
      `  ${`${parameter.name}${parameter.required ? '*' : ''}`.padEnd(28)} ${parameter.in.padEnd(6)} ${parameter.type.padEnd(8)} ${note?.description ?? ''}${example}`,
    );
  }
  return lines;
}

function bodyLines(details: OperationDetails | undefined): string[] {
  if (!details || details.body.length === 0) return [];
  const lines = ['', 'Body fields (--body file.json):'];
  for (const field of details.body) {
    const example = field.example === undefined ? '' : ` e.g. ${JSON.stringify(field.example)}`;
    lines.push(
      `  ${`${field.name}${field.required ? '*' : ''}`.padEnd(28)} ${field.type.padEnd(10)} ${field.description ?? ''}${example}`.trimEnd(),
    );
  }
  return lines;
}

/** `opflow call p002 --query a=b --body - <<< '{"query_text":"..."}'`. */
function callLine(row: OperationRow, example: ReturnType<typeof exampleRequest>): string {
  const query = Object.entries(example.parameters).map(
    ([name, value]) => ` --query ${shellQuote(`${name}=${String(value)}`)}`,
  );
  const body = example.body === undefined ? '' : ` --body - <<< ${shellQuote(JSON.stringify(example.body))}`;
  return `opflow call ${row.shortId && lookupOperation(row.shortId).ok ? row.shortId : row.operationId}${query.join('')}${body}`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
