/** Input files and standard input of `opflow run`. */
import type { CliRow, FileSpec } from './types';

const usage = 2;
const limit = 2 * 1024 * 1024;

/** `opflow run <workflow> {dir}/<file>` with one file that must be refused, naming it and why. */
const file = (
  name: string,
  workflow: string,
  fileName: string,
  content: FileSpec,
  ...reason: (string | RegExp)[]
): CliRow => ({
  name,
  args: ['run', workflow, `{dir}/${fileName}`],
  files: { [fileName]: content },
  exit: usage,
  names: [`skipping {dir}/${fileName}`, ...reason],
});

/** `opflow run <workflow> -` with standard input that must be refused. */
const stdin = (name: string, workflow: string, text: string, ...reason: (string | RegExp)[]): CliRow => ({
  name,
  args: ['run', workflow, '-'],
  stdin: text,
  exit: usage,
  names: ['skipping -', ...reason],
});

/** For each workflow: JSON inputs that break its schema, and the field the message must name. */
const badJsonInputs: [workflow: string, input: unknown, field: string][] = [
  ['novelty-check', {}, 'text'],
  ['novelty-check', { text: 5 }, 'text'],
  ['novelty-check', { text: '   ' }, 'text'],
  ['novelty-check', { text: 'x', unknown: 1 }, 'unknown'],
  ['novelty-check', { text: 'x', pbdStart: '2020-13-45' }, 'pbdStart'],
  ['novelty-check', { text: 'x', pbdEnd: '2021-02-29' }, 'pbdEnd'],
  ['novelty-check', { text: 'x', pbdStart: 'yesterday' }, 'pbdStart'],
  ['novelty-check', { text: 'x', title: '' }, 'title'],
  ['technical-disclosure', {}, 'text'],
  ['technical-disclosure', { text: ['a'] }, 'text'],
  ['technical-disclosure', { text: 'x', extra: true }, 'extra'],
  ['find-solution', {}, 'problem'],
  ['find-solution', { problem: 'x'.repeat(501) }, 'problem'],
  ['find-solution', { problem: null }, 'problem'],
  ['materials-find-solution', {}, 'problem'],
  ['materials-find-solution', { problem: '' }, 'problem'],
  ['pre-research-report', {}, 'question'],
  ['pre-research-report', { question: 42 }, 'question'],
  ['encyclopedia-qa', {}, 'question'],
  ['encyclopedia-qa', { question: '' }, 'question'],
  ['llm-chat', { model: 'gpt-9', query: 'x' }, 'model'],
  ['llm-chat', { query: 7 }, 'query'],
  ['patent-count', {}, 'query'],
  ['patent-count', { query: 42 }, 'query'],
  ['patent-count', { query: 'x'.repeat(1501) }, 'query'],
  ['patent-count', { query: '' }, 'query'],
  ['technical-qa', {}, 'question'],
  ['technical-qa', { question: 'x', model: 'gpt-9' }, 'model'],
  ['technical-qa', { question: 'x', sources: [] }, 'sources'],
  ['fto', {}, 'text'],
  ['fto', { text: 'x', markets: ['USA'] }, 'markets'],
  ['fto', { text: 'x', markets: 'US, WO' }, 'WO is not a market'],
  ['fto', { text: 'x', markets: [] }, 'markets'],
  ['fto', { text: 'x', legalStatus: ['granted'] }, 'legalStatus'],
  ['fto', { text: 'x', apdStart: '2024-02-30' }, 'apdStart'],
  ['fto', { text: 'x', apdStart: '2024-01-01', apdEnd: '2020-01-01' }, 'apdEnd'],
  ['fto', { text: 'x', legalData: 'yes' }, 'legalData'],
];

export const inputFileRows: CliRow[] = [
  {
    name: 'a file that does not exist',
    args: ['run', 'novelty-check', '{dir}/missing.md'],
    exit: usage,
    names: ['skipping {dir}/missing.md: no such file or folder'],
  },
  {
    name: 'a folder without inputs',
    args: ['run', 'novelty-check', '{dir}/empty'],
    files: { empty: { folder: true } },
    exit: usage,
    names: ['skipping {dir}/empty: the folder has no .md, .txt, .json, .docx or .pdf files'],
  },
  file('an empty file', 'novelty-check', 'empty.md', '', 'the file is empty'),
  file('a file of blanks', 'novelty-check', 'blank.txt', ' \n\t\n ', 'the file is empty'),
  file('a byte-order mark only', 'novelty-check', 'bom.md', '\uFEFF', 'the file is empty'),
  file('NUL bytes', 'novelty-check', 'nul.txt', Buffer.from('A hinge\u0000with NUL'), 'NUL or control bytes'),
  file(
    'control bytes',
    'novelty-check',
    'ctl.md',
    `${'\u0001\u0002\u0003'.repeat(20)}text`,
    'NUL or control bytes',
  ),
  file(
    'invalid UTF-8',
    'novelty-check',
    'latin1.txt',
    Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    'not UTF-8',
  ),
  file(
    'a PNG named .md',
    'novelty-check',
    'image.md',
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    /not UTF-8|NUL/,
  ),
  file('an .exe file', 'novelty-check', 'tool.exe', 'MZ', 'unsupported file type .exe'),
  file('a file without extension', 'novelty-check', 'README', 'text', 'unsupported file type (none)'),
  file('a .bin file', 'novelty-check', 'data.bin', 'x', 'unsupported file type .bin'),
  file('a FIFO named .txt (would hang)', 'novelty-check', 'pipe.txt', { fifo: true }, 'not a regular file'),
  file(
    'a link to /dev/zero named .txt (would never end)',
    'novelty-check',
    'zero.txt',
    { symlink: '/dev/zero' },
    'not a regular file',
  ),
  file(
    'a link to /dev/null named .md',
    'novelty-check',
    'null.md',
    { symlink: '/dev/null' },
    'not a regular file',
  ),
  file(
    'a dangling link',
    'novelty-check',
    'gone.md',
    { symlink: '/nonexistent/opflow/file.md' },
    'no such file',
  ),
  file(
    'a file over 2 MiB',
    'novelty-check',
    'big.txt',
    'x'.repeat(limit + 1),
    `at most ${limit / 1024 / 1024} MB`,
  ),
  file('JSON with a trailing comma', 'patent-count', 'comma.json', '{"query": "x",}', 'invalid JSON'),
  file('truncated JSON', 'patent-count', 'cut.json', '{"query": "x"', 'invalid JSON'),
  file('JSON with single quotes', 'patent-count', 'quotes.json', "{'query': 'x'}", 'invalid JSON'),
  file('JSON with NaN', 'patent-count', 'nan.json', '{"query": NaN}', 'invalid JSON'),
  file('an empty JSON array', 'patent-count', 'none.json', '[]', 'the JSON array is empty'),
  file('a JSON string', 'patent-count', 'string.json', '"TTL:(x)"', /query|expected object/i),
  file('JSON null', 'patent-count', 'null.json', 'null', /query|expected object/i),
  ...badJsonInputs.map(([workflow, input, field], index) =>
    file(
      `${workflow} input ${JSON.stringify(input).slice(0, 40)}`,
      workflow,
      `bad-${index}.json`,
      JSON.stringify(input),
      field,
    ),
  ),
  {
    name: 'a JSON array whose every element is bad names each element',
    args: ['run', 'patent-count', '{dir}/many.json'],
    files: { 'many.json': JSON.stringify([{ query: 1 }, {}, { query: '' }]) },
    exit: usage,
    names: ['{dir}/many.json[0]', '{dir}/many.json[1]', '{dir}/many.json[2]'],
  },
  stdin('empty standard input', 'novelty-check', '', 'standard input is empty'),
  stdin('blank standard input', 'novelty-check', '  \n\n', 'standard input is empty'),
  stdin(
    'standard input over the limit',
    'novelty-check',
    'x'.repeat(limit + 10),
    `at most ${limit / 1024 / 1024} MB`,
  ),
  stdin('standard input of NULs', 'novelty-check', 'text\u0000\u0000', 'NUL or control bytes'),
  stdin('broken JSON on standard input', 'patent-count', '{"query": ', 'invalid JSON'),
  stdin('a bad JSON input on standard input', 'patent-count', '{"query": 5}', 'query'),
  {
    name: 'standard input named twice',
    args: ['run', 'novelty-check', '-', '-'],
    stdin: '',
    exit: usage,
    names: ['standard input can be read only once'],
  },
];
