/**
 * Reading a batch's source as a stream of records, never whole: JSON Lines (split on newlines, with
 * the byte offset where each line ends, so a resumed ingest starts reading at its committed
 * position), CSV through csv-parse (header row, quoted fields, embedded newlines, a UTF-8 BOM, `,`
 * `;` or tab detected from the header), or a folder of documents walked in sorted order.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { parse } from 'csv-parse';
import { errorMessage } from '../errors/error-message';
import { openRegularFile } from '../files/bounded-read';
import { invalidUtf8Offset } from './invalid-utf8';

/** One record of a source: a parsed object, or why it could not be parsed. */
export interface SourceRecord {
  /** 1-based, in source order. */
  record: number;
  /** For people: `line 12`, `record 4 (lines 5-7)`, or a document's path. */
  position: string;
  /** JSON Lines: the byte offset just past this record. */
  bytesEnd?: number | undefined;
  value?: Record<string, unknown> | undefined;
  /** A folder's document: its path relative to the folder (the disclosure id). */
  document?: string | undefined;
  error?: string | undefined;
}

/** Longest line or CSV record accepted (bigger is refused as a problem, the rest goes on). */
export const maxRecordBytes = 4 * 1024 * 1024;

/** Opens the manifest's bytes from `start` (a file locally, an object's range on S3). */
export type OpenBytes = (start: number) => Promise<Readable>;

/** A local manifest from `start`, opened under the bounded-read rule: a FIFO or a device is refused, not waited on. */
export const openFile =
  (path: string): OpenBytes =>
  async (start) => {
    const { handle } = await openRegularFile(path, { maxBytes: Number.POSITIVE_INFINITY });
    return handle.createReadStream({ start, highWaterMark: 256 * 1024, autoClose: true });
  };

/**
 * JSON Lines from byte `startByte` (record numbering continues from `startRecord`). Blank lines are
 * skipped but counted as lines, so line numbers stay those of an editor.
 */
export async function* readJsonLines(
  open: OpenBytes,
  startByte = 0,
  startRecord = 0,
): AsyncGenerator<SourceRecord> {
  const stream = await open(startByte);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let offset = startByte;
  let record = startRecord;
  let oversized = false;
  const lineOf = (bytes: Buffer): SourceRecord | undefined => {
    record += 1;
    const lineStart = offset;
    offset += bytes.length + 1;
    const base = { record, position: `line ${record}`, bytesEnd: offset };
    let text: string;
    try {
      text = strictUtf8.decode(bytes).replace(/\r$/, '');
    } catch {
      // Never replaced by U+FFFD and run: the user's text would reach the platform changed.
      const at = invalidUtf8Offset(bytes) ?? 0;
      return {
        ...base,
        error: `not UTF-8 text: an invalid byte sequence at byte ${lineStart + at} of the file; save the manifest as UTF-8`,
      };
    }
    if (record === 1 && text.charCodeAt(0) === 0xfeff) return parseLine(text.slice(1), base);
    if (text.trim() === '') return { ...base, value: undefined };
    return parseLine(text, base);
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      for (let at = chunk.indexOf(10, from); at !== -1; at = chunk.indexOf(10, from)) {
        const piece = chunk.subarray(from, at);
        from = at + 1;
        if (oversized) {
          record += 1;
          offset += pendingBytes + piece.length + 1;
          yield { record, position: `line ${record}`, bytesEnd: offset, error: tooLong() };
          oversized = false;
        } else {
          const line = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
          const result = lineOf(Buffer.from(line));
          if (result) yield result;
        }
        pending = [];
        pendingBytes = 0;
      }
      const rest = chunk.subarray(from);
      pendingBytes += rest.length;
      if (pendingBytes > maxRecordBytes) {
        oversized = true;
        pending = [];
      } else if (rest.length > 0) pending.push(Buffer.from(rest));
    }
    if (oversized) {
      record += 1;
      offset += pendingBytes;
      yield { record, position: `line ${record}`, bytesEnd: offset, error: tooLong() };
    } else if (pendingBytes > 0) {
      const last = Buffer.concat(pending);
      const result = lineOf(last);
      if (result)
        yield { ...result, bytesEnd: result.bytesEnd === undefined ? undefined : result.bytesEnd - 1 };
    }
  } finally {
    stream.destroy();
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

const tooLong = () => `the line is longer than ${maxRecordBytes / 1024 / 1024} MB`;

function parseLine(text: string, base: Omit<SourceRecord, 'value'>): SourceRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ...base, error: `not valid JSON: ${errorMessage(error)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return {
      ...base,
      error: `a line must be a JSON object, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)?.slice(0, 40)}`,
    };
  return { ...base, value: value as Record<string, unknown> };
}

/** The delimiter of a CSV header line: the most frequent of `,` `;` and tab outside quotes. */
export function detectDelimiter(header: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let quoted = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && counts.has(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  let best = ',';
  let bestCount = 0;
  for (const [delimiter, count] of counts) {
    if (count > bestCount) {
      best = delimiter;
      bestCount = count;
    }
  }
  return best;
}

async function readHeaderLine(open: OpenBytes): Promise<string> {
  const stream = await open(0);
  let text = '';
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      text += chunk.toString('utf8');
      const end = text.search(/\r?\n/);
      if (end !== -1) return text.slice(0, end);
      if (text.length > 1024 * 1024) break;
    }
  } finally {
    stream.destroy();
  }
  return text;
}

/**
 * CSV records as objects keyed by the header's columns, from the start; the first `skip` records
 * (committed by an earlier run of this ingest) are counted but not returned. Empty cells are left
 * out. A record csv-parse refuses (a wrong number of fields, a bad quote) is a problem, and reading
 * goes on.
 */
export async function* readCsv(open: OpenBytes, skip = 0): AsyncGenerator<SourceRecord> {
  const delimiter = detectDelimiter((await readHeaderLine(open)).replace(/^\uFEFF/, ''));
  // Records and refused records are numbered as the parser meets them (it runs ahead of the
  // reader), and handed out in that order.
  let counter = 0;
  const refused: SourceRecord[] = [];
  // Where the last record (read or refused) ended, and how many blank lines the parser had skipped
  // by then: a record that fails starts on the next line that is not blank.
  let lastEnd = 1;
  let blankAtLastEnd = 0;
  let duplicate: { name: string; columns: number[] } | undefined;
  const parser = parse({
    bom: true,
    delimiter,
    columns: (names: string[]) => {
      const trimmed = names.map((name) => name.trim());
      // Two columns of one name: csv-parse would keep the last silently. The whole manifest is refused.
      const first = new Map<string, number>();
      trimmed.forEach((name, index) => {
        if (name === '' || duplicate) return;
        const earlier = first.get(name);
        if (earlier === undefined) first.set(name, index);
        else duplicate = { name, columns: [earlier + 1, index + 1] };
      });
      return trimmed;
    },
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: maxRecordBytes,
    on_record: (record: Record<string, string>, context: { lines: number; empty_lines: number }) => {
      lastEnd = context.lines;
      blankAtLastEnd = context.empty_lines;
      return { record, n: ++counter, line: context.lines };
    },
    on_skip: (error) => {
      const n = ++counter;
      const info = error as { code?: string; lines?: number; empty_lines?: number } | undefined;
      const start = lastEnd + 1 + Math.max(0, (info?.empty_lines ?? blankAtLastEnd) - blankAtLastEnd);
      if (info?.code === 'CSV_QUOTE_NOT_CLOSED') {
        // csv-parse names the last line of the file, where it gave up; the user needs the line
        // where the quote was opened, and to know that everything after it was swallowed.
        refused.push({
          record: n,
          position: `record ${n} (line ${start})`,
          error: `not a valid CSV record: a quote opened in this record (line ${start}) is never closed, so every line after it${info.lines && info.lines > start ? ` (to line ${info.lines})` : ''} was read as part of this record; close the quote`,
        });
        return undefined;
      }
      const lines = info?.lines;
      if (lines) {
        lastEnd = lines;
        blankAtLastEnd = info?.empty_lines ?? blankAtLastEnd;
      }
      refused.push({
        record: n,
        position: `record ${n}${lines ? ` (line ${lines})` : ''}`,
        error: `not a valid CSV record: ${error?.message ?? 'unreadable'}`,
      });
      return undefined;
    },
  });
  const stream = await open(0);
  let bytesRead = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  // Checked as it streams: invalid UTF-8 is refused with its byte offset, never read as U+FFFD.
  const utf8Check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        const at = bytesRead + (invalidUtf8Offset(chunk) ?? 0);
        return done(Object.assign(new Error('invalid UTF-8'), { code: 'OPFLOW_INVALID_UTF8', at }));
      }
      bytesRead += chunk.byteLength;
      done(null, chunk);
    },
    flush(done) {
      try {
        decoder.decode();
        done();
      } catch {
        done(Object.assign(new Error('invalid UTF-8'), { code: 'OPFLOW_INVALID_UTF8', at: bytesRead - 1 }));
      }
    },
  });
  stream.on('error', (error) => parser.destroy(error));
  utf8Check.on('error', (error) => parser.destroy(error));
  stream.pipe(utf8Check).pipe(parser);
  try {
    for await (const chunk of parser as AsyncIterable<{
      record: Record<string, string>;
      n: number;
      line: number;
    }>) {
      if (duplicate) {
        yield {
          record: 1,
          position: 'line 1 (the header)',
          error: `the header names the column "${duplicate.name}" twice (columns ${duplicate.columns.join(' and ')}): rename or remove one; no record of this manifest is read`,
        };
        return;
      }
      while (refused.length > 0 && (refused[0] as SourceRecord).record < chunk.n) {
        const next = refused.shift() as SourceRecord;
        if (next.record > skip) yield next;
      }
      if (chunk.n <= skip) continue;
      const value: Record<string, unknown> = {};
      for (const [name, cell] of Object.entries(chunk.record)) {
        if (name !== '' && cell !== '') value[name] = cell;
      }
      yield { record: chunk.n, position: `record ${chunk.n} (line ${chunk.line})`, value };
    }
    for (const next of refused.splice(0)) if (next.record > skip) yield next;
    if (duplicate && counter === 0)
      yield {
        record: 1,
        position: 'line 1 (the header)',
        error: `the header names the column "${duplicate.name}" twice (columns ${duplicate.columns.join(' and ')}): rename or remove one`,
      };
  } catch (error) {
    const invalid = error as { code?: string; at?: number };
    if (invalid.code !== 'OPFLOW_INVALID_UTF8') throw error;
    for (const next of refused.splice(0)) if (next.record > skip) yield next;
    yield {
      record: counter + 1,
      position: `record ${counter + 1}`,
      error: `not UTF-8 text: an invalid byte sequence at byte ${invalid.at} of the file; save the manifest as UTF-8 (the rest of the file is not read)`,
    };
  } finally {
    stream.destroy();
  }
}

/** Every file under `folder` (hidden ones left out), in sorted order, from record `skip` on. */
export async function* readFolder(folder: string, skip = 0): AsyncGenerator<SourceRecord> {
  let record = 0;
  for await (const path of walk(folder)) {
    record += 1;
    if (record <= skip) continue;
    const id = relative(folder, path).split(sep).join('/');
    yield { record, position: id, document: id };
  }
}

async function* walk(dir: string): AsyncGenerator<string> {
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}
