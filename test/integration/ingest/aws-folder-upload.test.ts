/**
 * `opflow --backend aws ingest <folder>` through the real bin/opflow.js against the AWS emulators: a
 * document over the ingest's 50 MB limit is skipped with a line naming it and the limit (exit 1,
 * `problems` in --json), and every other document of the folder is uploaded to the batch's inbox.
 */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../scripts/emulators/aws-emulators';
import { childEnv, killRunningOpflows, runOpflow } from '../../e2e/local/opflow-process';

let emulators: AwsEmulators;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false, dynamoDb: false });
  env = {
    ...emulators.environment(),
    OPFLOW_TABLE_NAME: 'opflow-jobs',
    OPFLOW_QUEUE_URL: emulators.createQueue().queueUrl,
    OPFLOW_BUCKET_NAME: emulators.createBucket(),
    OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/test/api-key/',
  };
  dir = mkdtempSync(join(tmpdir(), 'opflow-aws-folder-'));
  mkdirSync(join(dir, 'disclosures'));
  writeFileSync(join(dir, 'disclosures', 'a.md'), '# A hinge\n\nA hinge that folds twice.\n');
  writeFileSync(join(dir, 'disclosures', 'c.md'), '# A lamp\n\nA lamp that dims itself.\n');
  // 51 MB, sparse: refused from its size before a byte is read.
  writeFileSync(join(dir, 'disclosures', 'big.md'), '');
  truncateSync(join(dir, 'disclosures', 'big.md'), 51 * 1024 * 1024);
}, 120_000);
afterAll(async () => {
  killRunningOpflows();
  await emulators?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('opflow --backend aws ingest <folder>', () => {
  it('skips a document over 50 MB with a line in the problems, and uploads the rest', async () => {
    const args = ['--backend', 'aws', 'ingest', 'disclosures', '--workflow', 'technical-disclosure'];
    const text = await runOpflow([...args, '--batch', 'docs', '--no-wait'], { env: childEnv(env), cwd: dir });
    expect(text.code, text.stderr).toBe(1);
    expect(text.stderr).toContain('opflow: big.md: not uploaded: too large (51 MB; at most 50 MB)');
    expect(text.stderr).toContain('uploaded 2 objects');
    expect(text.stderr).not.toMatch(/^\s+at /m);

    const json = await runOpflow([...args, '--batch', 'docs2', '--no-wait', '--json'], {
      env: childEnv(env),
      cwd: dir,
    });
    expect(json.code, json.stderr).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      uploaded: 2,
      problems: [{ document: 'big.md', reason: 'too large (51 MB; at most 50 MB)' }],
      exitCode: 1,
    });

    const listed = await emulators.clients.s3.send(
      new ListObjectsV2Command({
        Bucket: env.OPFLOW_BUCKET_NAME,
        Prefix: 'inbox/technical-disclosure/docs/',
      }),
    );
    expect((listed.Contents ?? []).map((object) => object.Key).sort()).toEqual([
      'inbox/technical-disclosure/docs/a.md',
      'inbox/technical-disclosure/docs/c.md',
    ]);
  }, 120_000);
});
