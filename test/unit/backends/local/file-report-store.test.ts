// Where the file report store puts things, which keys it refuses, and that writes are atomic.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileReportStore, InvalidReportKeyError } from '../../../../shared/backends/local';

describe('FileReportStore', () => {
  let dir: string;
  let out: string;
  let reports: FileReportStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-reports-'));
    out = join(dir, 'out');
    reports = new FileReportStore({ outDir: out });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes reports/<jobId>/... as <out>/<jobId>/..., with nothing else beside the files', async () => {
    await reports.put('reports/J1/report.md', '# Hello', 'text/markdown; charset=utf-8');
    await reports.put(
      'reports/J1/attachments/disclosure.docx',
      new Uint8Array([80, 75]),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(readFileSync(join(out, 'J1', 'report.md'), 'utf8')).toBe('# Hello');
    expect(readdirSync(join(out, 'J1')).sort()).toEqual(['attachments', 'report.md']);
    expect(readdirSync(join(out, 'J1', 'attachments'))).toEqual(['disclosure.docx']);
    expect(existsSync(join(out, '.opflow', 'types'))).toBe(false);
  });

  it('keeps other keys out of the way, and lists them under their own prefix', async () => {
    await reports.put('inputs/J1/input.json', '{}', 'application/json');
    expect(existsSync(join(out, '.opflow', 'objects', 'inputs', 'J1', 'input.json'))).toBe(true);
    expect(await reports.list('inputs/')).toEqual(['inputs/J1/input.json']);
    expect(await reports.list('reports/')).toEqual([]);
    expect(await reports.list('')).toEqual(['inputs/J1/input.json']);
  });

  it('remembers a content type its extension does not imply', async () => {
    await reports.put('reports/J1/data.json', '[]', 'application/vnd.custom+json');
    expect((await reports.get('reports/J1/data.json'))?.contentType).toBe('application/vnd.custom+json');
    await reports.put('reports/J1/data.json', '[]', 'application/json');
    expect((await reports.get('reports/J1/data.json'))?.contentType).toBe('application/json');
    expect(existsSync(join(out, '.opflow', 'types', 'reports', 'J1', 'data.json'))).toBe(false);
  });

  it('infers the content type of a file put there by hand from its extension', async () => {
    await reports.put('reports/J1/x.bin', 'x', 'application/octet-stream');
    expect((await reports.get('reports/J1/x.bin'))?.contentType).toBe('application/octet-stream');
  });

  it('leaves no temporary files behind and never lists them', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        reports.put('reports/J1/result.json', JSON.stringify({ i }), 'application/json'),
      ),
    );
    expect(readdirSync(join(out, 'J1'))).toEqual(['result.json']);
    expect(JSON.parse(readFileSync(join(out, 'J1', 'result.json'), 'utf8'))).toHaveProperty('i');
    expect(await reports.list('reports/J1/')).toEqual(['reports/J1/result.json']);
  });

  it('links to the absolute path of the file', async () => {
    await reports.put('reports/J1/report.html', '<p>x</p>', 'text/html; charset=utf-8');
    const link = await reports.link('reports/J1/report.html');
    expect(isAbsolute(link)).toBe(true);
    expect(link).toBe(join(out, 'J1', 'report.html'));
  });

  it('resolves a relative output folder against the current directory', () => {
    expect(new FileReportStore().outDir).toBe(join(process.cwd(), 'opflow-out'));
  });

  it.each([
    ['', 'must be 1 to 1024 characters'],
    ['reports/../../etc/passwd', 'may not start with a dot'],
    ['reports/J1/../../x', 'may not start with a dot'],
    ['/etc/passwd', 'empty path segment'],
    ['reports//x', 'empty path segment'],
    ['reports/J1/a\\b', 'backslashes'],
    ['reports/J1/.hidden', 'may not start with a dot'],
    ['reports/J1', 'expected reports/<jobId>/<name>'],
    ['reports/J1/x\u0000y', 'control characters'],
  ])('refuses the key %j (%s)', async (key, reason) => {
    await expect(reports.put(key, 'x', 'text/plain')).rejects.toThrow(InvalidReportKeyError);
    await expect(reports.get(key)).rejects.toThrow(reason);
  });

  it('refuses a listing prefix that climbs out of the folder', async () => {
    await expect(reports.list('reports/../')).rejects.toThrow(InvalidReportKeyError);
  });

  it('accepts file names in any script', async () => {
    await reports.put('reports/J1/attachments/专利 报告.pdf', new Uint8Array([37, 80]), 'application/pdf');
    expect(await reports.list('reports/J1/attachments/')).toEqual(['reports/J1/attachments/专利 报告.pdf']);
    expect((await reports.get('reports/J1/attachments/专利 报告.pdf'))?.contentType).toBe('application/pdf');
  });
});
