/**
 * The job the code before typed step handles (e646880) parked at its feature selection, resumed by
 * today's bundled functions on the aws backend: its item as e646880's DynamoDbJobStore wrote it
 * (test/fixtures/pre-handles/novelty-check-at-features/dynamodb-item.json, put into DynamoDB Local
 * as is), its step outputs in S3 (fauxqs) at the keys the earlier code used, and the sandbox's state
 * file holding its upstream task. Answered through the API, run by the step worker under the
 * simulated SQS event source. The same job on SQLite: test/e2e/workflows/persisted-jobs.test.ts.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportKeys } from '../../../shared/engine';
import { SANDBOX_API_KEY } from '../../../shared/sandbox';
import {
  callsAfterAnswer,
  expectParkedByName,
  expectResumedReport,
  keptStepOutputs,
  parked,
  parkedItem,
  preHandlesFixture,
} from '../../support/pre-handles';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { callSequence, lastSeq } from '../workflows/world';
import { AwsWorld } from './harness/aws-world';

describe('a job recorded before typed step handles (DynamoDB Local, S3)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-pre-handles-aws-'));
  let world: AwsWorld;
  beforeAll(async () => {
    cpSync(join(preHandlesFixture, 'sandbox-state.json'), join(dir, 'sandbox-state.json'));
    world = await AwsWorld.start({
      startAt: parked.clockNow,
      // The upstream task belongs to the key that created it: the built-in sandbox's.
      tenantKey: SANDBOX_API_KEY,
      sandbox: { stateFile: join(dir, 'sandbox-state.json') },
    });
    await world.emulators.clients.dynamoDb.send(
      new PutItemCommand({
        TableName: world.env.OPFLOW_TABLE_NAME,
        Item: parkedItem,
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    for (const { key, body } of keptStepOutputs()) await world.reports.put(key, body, 'application/json');
  }, REAL_PROCESS_TIMEOUT_MS);
  afterAll(async () => {
    await world?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a novelty check parked at its feature selection goes on to SUCCEEDED with the chosen feature', async () => {
    const { id } = parked.job;
    // Today's code reads the earlier item as the record the earlier code kept.
    const read = await world.store.get(id);
    expect(read).toEqual(parked.job);
    expectParkedByName(read!);
    const shown = await world.api('GET', `/jobs/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.job).toMatchObject({ status: 'AWAITING_INPUT', step: 'features' });

    const before = lastSeq(world);
    const answered = await world.api('POST', `/jobs/${id}/selection`, { body: { selected: ['f2'] } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const [done] = await world.settle([id]);
    expect(done!.status, JSON.stringify(done!.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(callsAfterAnswer);

    const text = async (key: string) => Buffer.from((await world.reports.get(key))!.body).toString('utf8');
    const keys = reportKeys(id);
    expectResumedReport({ markdown: await text(keys.markdown), result: JSON.parse(await text(keys.result)) });
  });
});
