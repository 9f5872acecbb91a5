/**
 * Manifests and document folders of `opflow ingest`. A bad record is reported with the manifest,
 * its line (or CSV record and line) and the field or reason, exit 1, while the valid records are
 * still taken (`--dry-run` counts them; `--no-wait` commits them to the batch). A source opflow
 * cannot read at all, or a bad flag, is refused (exit 2) naming the path or flag.
 */
import { expect } from 'vitest';
import type { CliRow, FileSpec } from './types';

const usage = 2;
const someBad = 1;

/** A good JSON Lines record. */
const good = (id: string) => JSON.stringify({ id, query: `TTL:(${id})` });

/**
 * `opflow ingest {dir}/m.jsonl --workflow patent-count --dry-run` with `bad` as line 2 between two
 * good lines: the bad line is named (file, line, reason) and the two good ones are still usable.
 */
const jsonlLine = (name: string, bad: string, ...reason: (string | RegExp)[]): CliRow => ({
  name: `JSON Lines: ${name}`,
  args: ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--dry-run'],
  files: { 'm.jsonl': `${good('a')}\n${bad}\n${good('c')}\n`, 'good.txt': 'TTL:(from a file)' },
  exit: someBad,
  namesIn: 'output',
  names: ['line 2', ...reason],
  stdout: [/dry run: 3 records, 2 usable, 1 refused/, /✖ m\.jsonl, line 2/],
  json: { dryRun: true, records: 3, items: 2, problems: [{ position: 'line 2', record: 2 }] },
});

/** The same with a CSV manifest: `record` is the bad record's text after the header `id,query`. */
const csvRecord = (
  name: string,
  record: string,
  position: string,
  ...reason: (string | RegExp)[]
): CliRow => ({
  name: `CSV: ${name}`,
  args: ['ingest', 'm.csv', '--workflow', 'patent-count', '--dry-run'],
  files: { 'm.csv': `id,query\na,TTL:(a)\n${record}\nc,TTL:(c)\n` },
  exit: someBad,
  namesIn: 'output',
  names: [position, ...reason],
  stdout: [/dry run: 3 records, 2 usable, 1 refused/, `✖ m.csv, ${position}`],
  json: { dryRun: true, records: 3, items: 2 },
});

/** A folder with two good documents and one bad one, named by its path in the folder. */
const document = (
  name: string,
  fileName: string,
  content: FileSpec,
  ...reason: (string | RegExp)[]
): CliRow => ({
  name: `folder: ${name}`,
  args: ['ingest', 'docs', '--workflow', 'patent-count', '--dry-run'],
  files: { 'docs/a.txt': 'TTL:(a)', 'docs/sub/b.md': '# B\n\nTTL:(b)\n', [`docs/${fileName}`]: content },
  exit: someBad,
  namesIn: 'output',
  names: [fileName, ...reason],
  stdout: [/dry run: 3 records, 2 usable, 1 refused/],
  json: { dryRun: true, items: 2, problems: [{ position: fileName }] },
});

const refused = (
  name: string,
  args: string[],
  files: Record<string, FileSpec>,
  ...names: string[]
): CliRow => ({
  name,
  args,
  files,
  exit: usage,
  names,
});

export const manifestRows: CliRow[] = [
  jsonlLine('malformed JSON', '{"id": "b", "query": ', 'not valid JSON'),
  jsonlLine('not JSON at all', 'id=b query=x', 'not valid JSON'),
  jsonlLine('an array, not an object', '["b", "TTL:(b)"]', 'must be a JSON object, not an array'),
  jsonlLine('a string, not an object', '"b"', 'must be a JSON object'),
  jsonlLine('no id', '{"query": "TTL:(b)"}', "id: the disclosure's id is required"),
  jsonlLine('an empty id', '{"id": "", "query": "TTL:(b)"}', 'id: the id is empty'),
  jsonlLine('an id of the wrong type', '{"id": {"n": 1}, "query": "TTL:(b)"}', 'id:'),
  jsonlLine('a duplicate id', good('a'), 'duplicate id "a" (first at line 1)'),
  jsonlLine('the main field missing', '{"id": "b"}', 'query: the search expression is required'),
  jsonlLine('the main field empty', '{"id": "b", "query": ""}', 'query: the search expression is empty'),
  jsonlLine('the main field of the wrong type', '{"id": "b", "query": 42}', 'query'),
  jsonlLine(
    'text over the platform limit',
    JSON.stringify({ id: 'b', query: 'x'.repeat(1600) }),
    'at most 1,500 characters',
  ),
  jsonlLine('an unknown field', '{"id": "b", "query": "TTL:(b)", "colour": "red"}', 'colour'),
  jsonlLine(
    'an option out of its set',
    '{"id": "b", "query": "TTL:(b)", "collapseType": "NOPE"}',
    'collapseType',
  ),
  jsonlLine(
    'an unknown per-line workflow',
    '{"id": "b", "workflow": "nope", "query": "TTL:(b)"}',
    'unknown workflow "nope"',
  ),
  jsonlLine(
    'a per-line workflow misspelt',
    '{"id": "b", "workflow": "patent-cont", "query": "TTL:(b)"}',
    'unknown workflow "patent-cont" (did you mean patent-count?)',
  ),
  jsonlLine(
    'a per-line selection mode that does not exist',
    '{"id": "b", "query": "TTL:(b)", "select": "often"}',
    'select: must be "auto" or "manual"',
  ),
  jsonlLine(
    'a file that does not exist',
    '{"id": "b", "file": "missing.txt"}',
    'file: missing.txt does not exist',
  ),
  jsonlLine(
    'a file outside the manifest folder',
    '{"id": "b", "file": "/etc/hostname"}',
    'must be a path relative to the manifest',
  ),
  jsonlLine(
    'a line over the size limit',
    JSON.stringify({ id: 'b', query: 'x'.repeat(3_000_000) }),
    /too long|at most/,
  ),
  jsonlLine(
    'both a file and the main field',
    '{"id": "b", "file": "good.txt", "query": "TTL:(b)"}',
    'both file and query are given',
  ),
  {
    // An unclosed quote takes the rest of the file into its field: the record is named by the line
    // where the quote opened (csv-parse names the last line, where it gave up), and the records
    // before it still count.
    name: 'CSV: an unclosed quote',
    args: ['ingest', 'm.csv', '--workflow', 'patent-count', '--dry-run'],
    files: { 'm.csv': 'id,query\na,TTL:(a)\nb,"TTL:(b\nc,TTL:(c)\nd,TTL:(d)\n' },
    exit: someBad,
    namesIn: 'output',
    names: ['record 2 (line 3)', 'a quote opened in this record (line 3) is never closed', 'to line 5'],
    stdout: [/dry run: 2 records, 1 usable, 1 refused/, '✖ m.csv, record 2 (line 3)'],
    json: { dryRun: true, records: 2, items: 1 },
  },
  {
    // Blank lines before the record are skipped, and counted in the line number.
    name: 'CSV: an unclosed quote after blank lines',
    args: ['ingest', 'm.csv', '--workflow', 'patent-count', '--dry-run'],
    files: { 'm.csv': 'id,query\na,TTL:(a)\n\n\nb,"TTL:(b\nc,TTL:(c)\n' },
    exit: someBad,
    namesIn: 'output',
    names: ['record 2 (line 5)', 'quote opened in this record (line 5)'],
    stdout: [/dry run: 2 records, 1 usable, 1 refused/, '✖ m.csv, record 2 (line 5)'],
    json: { dryRun: true, records: 2, items: 1 },
  },
  {
    // Not an error (exit 0: nothing failed), but said: most likely the wrong file or a failed export.
    name: 'an empty JSON Lines manifest',
    args: ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--dry-run'],
    files: { 'm.jsonl': '' },
    exit: 0,
    namesIn: 'output',
    names: ['warning: m.jsonl has no records'],
    json: {
      dryRun: true,
      records: 0,
      items: 0,
      warnings: [expect.stringMatching(/m\.jsonl has no records/)],
    },
  },
  {
    name: 'a CSV manifest with a header row and nothing under it',
    args: ['ingest', 'm.csv', '--workflow', 'patent-count', '--no-wait', '--batch', 'bad-input-empty'],
    files: { 'm.csv': 'id,query\n\n' },
    exit: 0,
    namesIn: 'output',
    names: ['warning: m.csv has no records', 'a header row and nothing under it'],
    stdout: [/0 records read, 0 new items, 0 bad lines/],
    json: { end: 'read', batch: { items: 0 }, warnings: [expect.stringMatching(/m\.csv has no records/)] },
  },
  {
    name: 'a folder with no documents',
    args: ['ingest', 'docs', '--workflow', 'patent-count', '--dry-run'],
    files: { 'docs/.hidden': 'x', 'docs/sub': { folder: true } },
    exit: 0,
    namesIn: 'output',
    names: ['holds no documents'],
  },
  csvRecord('too many columns', 'b,TTL:(b),extra', 'record 2 (line 3)', 'Invalid Record Length'),
  csvRecord('an empty main field', 'b,', 'record 2 (line 3)', 'query: the search expression is required'),
  csvRecord('no id', ',TTL:(b)', 'record 2 (line 3)', 'id:'),
  csvRecord('a duplicate id', 'a,TTL:(again)', 'record 2 (line 3)', 'duplicate id "a"'),
  document('an empty document', 'empty.txt', '', 'empty'),
  document('an unsupported type', 'notes.rtf', '{\\rtf1 nothing}', 'unsupported document type'),
  document('a .docx that is not one', 'broken.docx', 'this is not a zip file', /broken\.docx/),
  document('a .pdf that is not one', 'broken.pdf', 'not a pdf', /broken\.pdf/),
  document('an empty .pdf', 'empty.pdf', '', /empty/),
  document(
    'text that is not UTF-8',
    'latin1.txt',
    Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    /not valid for encoding utf-8/i,
  ),
  {
    // Without --dry-run: the batch takes the two good lines, the bad one is in the answer.
    name: 'JSON Lines without --dry-run (--no-wait): the good lines become items',
    args: ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--no-wait', '--batch', 'bad-input-rows'],
    files: { 'm.jsonl': `${good('a')}\n{"id": "b", "query": \n${good('c')}\n` },
    exit: someBad,
    namesIn: 'output',
    names: ['line 2', 'not valid JSON'],
    stdout: [/3 records read, (2 new items|0 new items, 2 ingested before), 1 bad line/, '✖ m.jsonl, line 2'],
    json: { end: 'read', batch: { items: 2 }, problems: [{ position: 'line 2', record: 2 }] },
  },
  refused(
    'a path that does not exist',
    ['ingest', 'nothing.jsonl', '--workflow', 'patent-count'],
    {},
    'nothing.jsonl: no such file or folder',
  ),
  refused(
    'a file that is not a manifest',
    ['ingest', 'sheet.xlsx', '--workflow', 'patent-count'],
    { 'sheet.xlsx': 'x' },
    'sheet.xlsx: a manifest is a JSON Lines file',
  ),
  refused('no --workflow', ['ingest', 'm.jsonl'], { 'm.jsonl': `${good('a')}\n` }, '--workflow'),
  refused(
    'an unknown --workflow',
    ['ingest', 'm.jsonl', '--workflow', 'nope'],
    { 'm.jsonl': `${good('a')}\n` },
    'unknown workflow "nope"',
  ),
  refused(
    'a misspelt --workflow',
    ['ingest', 'm.jsonl', '--workflow', 'novely'],
    { 'm.jsonl': `${good('a')}\n` },
    'unknown workflow "novely" (did you mean novelty-check?)',
  ),
  refused(
    '--failure-budget that is not a share or count',
    ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--failure-budget', 'lots'],
    { 'm.jsonl': `${good('a')}\n` },
    '--failure-budget',
  ),
  refused(
    '--max-units that is not a whole number',
    ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--max-units', 'many'],
    { 'm.jsonl': `${good('a')}\n` },
    '--max-units',
  ),
  refused(
    '--in-flight of zero',
    ['ingest', 'm.jsonl', '--workflow', 'patent-count', '--in-flight', '0'],
    { 'm.jsonl': `${good('a')}\n` },
    '--in-flight',
  ),
  refused(
    'batch --download without a batch id',
    ['batch', '--download', 'out'],
    {},
    '--download needs a batch id',
  ),
  {
    name: 'batch --download of a batch that does not exist',
    args: ['batch', 'no-such-batch', '--download', 'out'],
    exit: 4,
    names: ['no batch no-such-batch'],
  },
];
