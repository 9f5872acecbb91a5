// The design workflows through the real bin against the built-in sandbox: product images as files,
// a folder of them, a file that only looks like an image, and --set for the design to compare with.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAADAAAAAwCAAAAAByaaZbAAAAq0lEQVR42u2WSw6AMAhE5/6XxpgaU8oMLS4aF2WlhIf8SoUVBQd4tU1WgWYsEFD78JQBvRUhoOKHyAPK3gQBlq9+H4DHs9PY6CKkOwJD6gjlIVVyqlhC0oeOACk56XTnxEWrZykAYtRIwOwDnHAAFgB4YH5y9gJYArAT+GGV6p0uz1J9Wm0KJCfO0vVpKwQ70xnBt4Ym1F4yozdCsvkYku/WD9s7XBDnT+CWC0dz1oyW+a8bAAAAAElFTkSuQmCC',
  'base64',
);

interface JobSummary {
  id: string;
  label: string;
  status: string;
}

describe('design workflows through the real bin (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-design-'));
    env = childEnv({ OPFLOW_SANDBOX_SPEED: '300', OPFLOW_LOG_LEVEL: 'debug' });
    mkdirSync(join(dir, 'photos'));
    writeFileSync(join(dir, 'photos', 'front.png'), PNG);
    writeFileSync(join(dir, 'photos', 'side.jpg.png'), PNG);
    writeFileSync(join(dir, 'photos', 'notes.txt'), 'not an image');
    // A GIF named .png: refused by its first bytes, naming the file.
    writeFileSync(join(dir, 'logo.png'), Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00', 'latin1'));
    copyFileSync(join(dir, 'photos', 'front.png'), join(dir, 'product.png'));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('design-infringement-search: each image file of a folder is a search; a GIF named .png is refused by name', async () => {
    const result = await opflow('run', 'design-infringement-search', 'photos', 'logo.png', '--json');
    expect(result.stderr).toContain(
      'logo.png: invalid input for design-infringement-search: input.images[0].data: image (logo.png): not a PNG or JPEG image (by its first bytes it is a GIF image)',
    );
    // The image's bytes never reach the output or the log lines.
    expect(result.stderr + result.stdout).not.toContain(PNG.toString('base64').slice(0, 40));
    const { jobs } = JSON.parse(result.stdout) as { jobs: JobSummary[] };
    expect(
      jobs
        .filter((job) => job.status === 'SUCCEEDED')
        .map((job) => job.label)
        .sort(),
    ).toEqual(['front.png', 'side.jpg.png']);
    const job = jobs.find((item) => item.label === 'front.png')!;
    const markdown = readFileSync(join(dir, 'opflow-out', job.id, 'report.md'), 'utf8');
    expect(markdown.split('\n')[0]).toBe('# Design infringement search: front.png');
    expect(markdown).toContain('front.png (PNG, 1 KB, uploaded)');
    expect(markdown).toMatch(/## Risk conclusion\n\n(High|Medium|Low) risk/);
    // opflow report lists the images kept beside the report, each a file that is there.
    const listed = await opflow('report', job.id);
    expect(listed.code, listed.stderr).toBe(0);
    const folder = join(dir, 'opflow-out', job.id);
    expect(listed.stdout).toContain(`image     ${join(folder, 'images', '1.png')}\n`);
    const links = JSON.parse((await opflow('report', job.id, '--json')).stdout) as { images: string[] };
    expect(links.images).toEqual([join(folder, 'images', '1.png')]);
    expect(readFileSync(links.images[0]!).equals(PNG)).toBe(true);
  }, 180_000);

  it('design-infringement-1v1: an image file and --set patent=... compare the product with the design', async () => {
    const missing = await opflow('run', 'design-infringement-1v1', 'product.png');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('--set patent=');
    const result = await opflow(
      'run',
      'design-infringement-1v1',
      'product.png',
      '--set',
      'patent=EU0040356240003S',
      '--set',
      'lang=cn',
      '--json',
    );
    expect(result.code, result.stderr).toBe(0);
    const { jobs } = JSON.parse(result.stdout) as { jobs: JobSummary[] };
    expect(jobs[0]!.status).toBe('SUCCEEDED');
    const markdown = readFileSync(join(dir, 'opflow-out', jobs[0]!.id, 'report.md'), 'utf8');
    expect(markdown.split('\n')[0]).toBe('# Design comparison: product.png vs EU0040356240003S');
    expect(markdown).toMatch(/- In common: 两者/);
  }, 180_000);

  it('a workflow that takes no images refuses an image file and skips images in a folder', async () => {
    const result = await opflow('run', 'llm-chat', 'product.png');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('product.png: unsupported file type .png');
  }, 60_000);
});
