import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { technicalDisclosure } from '../../../shared/workflows';
import { callSequence, lastSeq, startWorld, type World } from './world';

const file = join(__dirname, '../../../examples/disclosures/heat-pump-dryer_condensate-heat-recovery.txt');
const input = technicalDisclosure.fromText!(readFileSync(file, 'utf8'), file) as {
  text: string;
  title: string;
};

describe('technical-disclosure against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('extracts the key content, waits for the document and keeps a copy of it', async () => {
    const before = lastSeq(world);
    const job = await world.run('technical-disclosure', input);
    expect(callSequence(world, before)).toEqual(['ai32-1', 'ai32-2', 'ai32-3', 'download']);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    expect(result.attachments).toEqual([
      {
        fileName: expect.stringMatching(/^disclosure-.+\.docx$/),
        contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      },
    ]);
    const fileName = result.attachments[0]!.fileName;
    const document = await world.attachment(job.id, fileName);
    // a .docx is a zip archive
    expect(Buffer.from(document!).subarray(0, 2).toString()).toBe('PK');
    expect(markdown).toContain(`# Technical disclosure: ${input.title}`);
    expect(markdown).toContain(`[${fileName}](attachments/${fileName})`);
    expect(markdown).toContain('## Key content');
    expect(markdown).toContain('### Objectives of the invention\n\nThe invention aims to improve');
    expect(markdown).toContain('### Mechanism');
    expect(markdown).toContain('### Subjects of improvement');
    expect(result.summary).toMatch(new RegExp(`^${fileName.replace('.', '\\.')}; mechanism: `));
    // ai32-2 is called once; ai32-3 is polled until the document is ready
    expect(world.sandbox.ledger.count({ operationId: 'ai32-2' })).toBe(1);
    expect(world.sandbox.ledger.count({ operationId: 'ai32-3' })).toBeGreaterThanOrEqual(1);
  });
});
