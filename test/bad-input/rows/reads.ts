/**
 * Reads that would hang, eat the machine or climb out of their folder, and names no job could have,
 * at `opflow ingest`, `opflow call`, `callbacks secret` and `resume`: each refused at once, naming the
 * file, line, byte or flag; the valid rest of a manifest still taken.
 */
import { docxWithParagraphs } from '../../support/document-bombs';
import type { CliRow, FileSpec } from './types';

const usage = 2;
const someBad = 1;
const good = (id: string) => JSON.stringify({ id, query: `TTL:(${id})` });

/** A manifest `m/m.jsonl` with `bad` as line 2 between two good lines, plus `files` under the case folder. */
const line = (
  name: string,
  bad: string,
  files: Record<string, FileSpec>,
  ...reason: (string | RegExp)[]
): CliRow => ({
  name: `manifest line: ${name}`,
  args: ['ingest', 'm/m.jsonl', '--workflow', 'patent-count', '--dry-run'],
  files: { 'm/m.jsonl': `${good('a')}\n${bad}\n${good('c')}\n`, ...files },
  exit: someBad,
  namesIn: 'output',
  names: ['line 2', ...reason],
  stdout: [/dry run: 3 records, 2 usable, 1 refused/],
  json: { dryRun: true, records: 3, items: 2, problems: [{ position: 'line 2', record: 2 }] },
});

export const readRows: CliRow[] = [
  {
    name: 'a FIFO as the manifest',
    args: ['ingest', 'pipe.jsonl', '--workflow', 'patent-count', '--dry-run'],
    files: { 'pipe.jsonl': { fifo: true } },
    exit: usage,
    names: ['pipe.jsonl: not a regular file'],
  },
  {
    name: 'a device as the manifest (a link to /dev/zero)',
    args: ['ingest', 'zero.jsonl', '--workflow', 'patent-count', '--dry-run'],
    files: { 'zero.jsonl': { symlink: '/dev/zero' } },
    exit: usage,
    names: ['zero.jsonl: not a regular file'],
  },
  line(
    'file is a FIFO',
    '{"id": "b", "file": "pipe.txt"}',
    { 'm/pipe.txt': { fifo: true } },
    'file: pipe.txt: not a regular file',
  ),
  line(
    'file is a link to a device',
    '{"id": "b", "file": "zero.txt"}',
    { 'm/zero.txt': { symlink: '/dev/zero' } },
    'zero.txt',
    /not a regular file|outside/,
  ),
  line(
    'file climbs out of the folder with ../',
    '{"id": "b", "file": "../outside.txt"}',
    { 'outside.txt': 'TTL:(outside)' },
    "file: ../outside.txt: is outside the manifest's folder",
  ),
  line(
    'file is a link pointing out of the folder',
    '{"id": "b", "file": "link.txt"}',
    { 'outside.txt': 'TTL:(outside)', 'm/link.txt': { symlink: '../outside.txt' } },
    "file: link.txt: is outside the manifest's folder",
  ),
  line(
    'a field holding \\u0000',
    '{"id": "b", "query": "TTL:(a\\u0000b)"}',
    {},
    'query: holds a NUL character',
  ),
  {
    name: 'manifest line: invalid UTF-8',
    args: ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--dry-run'],
    files: {
      'm.jsonl': Buffer.concat([
        Buffer.from(`${good('a')}\n{"id": "b", "query": "TTL:(caf`),
        Buffer.from([0xe9]),
        Buffer.from(`)"}\n${good('c')}\n`),
      ]),
    },
    exit: someBad,
    namesIn: 'output',
    names: ['line 2', 'not UTF-8 text: an invalid byte sequence at byte 59 of the file'],
    json: { dryRun: true, records: 3, items: 2 },
  },
  {
    name: 'CSV: a column named twice',
    args: ['ingest', 'm.csv', '--workflow', 'patent-count', '--dry-run'],
    files: { 'm.csv': 'id,query,query\na,TTL:(a),TTL:(b)\n' },
    exit: someBad,
    namesIn: 'output',
    names: ['line 1 (the header)', 'names the column "query" twice (columns 2 and 3)'],
  },
  {
    name: 'CSV: invalid UTF-8',
    args: ['ingest', 'm.csv', '--workflow', 'patent-count', '--dry-run'],
    files: {
      'm.csv': Buffer.concat([Buffer.from('id,query\na,TTL:(caf'), Buffer.from([0xe9]), Buffer.from(')\n')]),
    },
    exit: someBad,
    namesIn: 'output',
    names: ['not UTF-8 text: an invalid byte sequence at byte 19 of the file'],
  },
  {
    name: 'a folder document that is a zip bomb',
    args: ['ingest', 'docs', '--workflow', 'patent-count', '--dry-run'],
    files: { 'docs/a.txt': 'TTL:(a)', 'docs/bomb.docx': docxWithParagraphs(15_000_000) },
    exit: someBad,
    namesIn: 'output',
    names: ['bomb.docx', /unpacks to \d+ MB \(at most 100 MB\)/],
    json: { dryRun: true, items: 1 },
  },
  {
    name: '--tenant that no job could have',
    args: ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--tenant', 'a b'],
    files: { 'm.jsonl': `${good('a')}\n` },
    exit: usage,
    names: ['--tenant: "a b" is not a tenant name'],
  },
  {
    name: '--batch that is not a batch name',
    args: ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--batch', '../up'],
    files: { 'm.jsonl': `${good('a')}\n` },
    exit: usage,
    names: ['--batch: "../up" is not a batch name'],
  },
  {
    name: 'call --body naming a FIFO',
    args: ['call', 'p002', '--body', 'pipe.json'],
    files: { 'pipe.json': { fifo: true } },
    exit: usage,
    names: ['--body: cannot read pipe.json: not a regular file'],
  },
  {
    name: 'call --body naming a folder',
    args: ['call', 'p002', '--body', 'sub'],
    files: { sub: { folder: true } },
    exit: usage,
    names: ['--body: cannot read sub: is a folder'],
  },
  {
    name: 'call: a multipart upload field naming a FIFO',
    args: ['call', 'l017', '--body', '{"file": "pipe.pdf"}'],
    files: { 'pipe.pdf': { fifo: true } },
    exit: usage,
    names: ['--body: file: cannot read pipe.pdf: not a regular file'],
  },
  {
    name: 'call --body - over the limit',
    args: ['call', 'p002', '--body', '-'],
    stdin: `{"query_text": "${'x'.repeat(10 * 1024 * 1024)}"}`,
    exit: usage,
    names: ['--body -: standard input is too large (over 10 MB; at most 10 MB)'],
  },
  {
    name: 'callbacks secret --tenant that climbs',
    args: ['callbacks', 'secret', '--tenant', '../../x'],
    exit: usage,
    names: ['--tenant: "../../x" is not a tenant name'],
  },
  {
    name: 'resume --select naming an option twice',
    args: ['resume', '01J00000000000000000000000', '--select', 'f1,f1'],
    exit: usage,
    names: ['--select: "f1" is given twice'],
  },
];
