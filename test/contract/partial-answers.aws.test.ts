// The PartialAnswerStore contract on DynamoDB Local: the text so far in `ANSWER#<jobId>`, the parts
// as `answer` changes of the change log that the long poll of GET /events reads.
import { describe, expect, it } from 'vitest';
import { DynamoDbChangeLog } from '../../shared/backends/aws/dynamodb-change-log';
import {
  answerChanges,
  DynamoDbPartialAnswers,
  maxPartChars,
} from '../../shared/backends/aws/dynamodb-partial-answers';
import { dynamoDbLocalForThisFile } from '../support/dynamodb-local';
import { answer, describePartialAnswerContract } from './partial-answers.contract';

const dynamo = dynamoDbLocalForThisFile();

describePartialAnswerContract('DynamoDbPartialAnswers', async () => {
  const { tableName, client } = await dynamo.newTable();
  const start = Date.now();
  let now = start;
  const log = new DynamoDbChangeLog({ client, tableName, now: () => now });
  const cursor = await log.head();
  return {
    store: new DynamoDbPartialAnswers({ client, tableName, now: () => now }),
    changes: async () => {
      // Settled: read as a reader 2 s later would.
      now += 2_000;
      const page = await log.after('acme', cursor, 100);
      now -= 2_000;
      return page.changes;
    },
    now: () => now,
  };
});

describe('answer changes on aws', () => {
  it('splits a long new part into changes of at most maxPartChars, offsets following', () => {
    const text = 'x'.repeat(maxPartChars * 2 + 10);
    const changes = answerChanges(answer({ text, offset: 5, at: 0 }));
    expect(changes.map((change) => [change.answer?.offset, change.answer?.text.length])).toEqual([
      [5, maxPartChars],
      [5 + maxPartChars, maxPartChars],
      [5 + 2 * maxPartChars, text.length - 5 - 2 * maxPartChars],
    ]);
    expect(new Set(changes.map((change) => change.sequence)).size).toBe(3);
  });
});
