/**
 * Partial answers on the job table (shared/engine/partial-answer.ts). Each publication writes the
 * text so far to `ANSWER#<jobId>` / `ANSWER` (one item a job, replaced; TTL a day), then its new
 * part into the change log (dynamodb-change-log.ts) as an `answer` change of the tenant's partition
 * and everyone's, which `GET /events` answers like the job changes. The step worker writes them
 * itself: the job table's stream and the events function see only job items, and a partial answer
 * is never a job record.
 *
 * Write units per publication: the text so far (1 per KB begun), two change items (1 each while
 * the new part is under about 700 bytes) and the write's marker (put and removed: 2). Published at
 * most once a second and only when the text grew, a 3 KB answer streamed in 20 s costs about
 * 20 × (2 + 2 + 2) = 120 write units.
 */
import { randomInt } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PartialAnswer, PartialAnswerStore } from '../../engine/partial-answer';
import { changeRetentionMs, DynamoDbChangeLog, type StreamChange } from './dynamodb-change-log';
import { ttlAttribute } from './table';

/** Text beyond this is not kept in the text-so-far item (DynamoDB's item is at most 400 KB). */
export const maxKeptAnswerChars = 120_000;
/** A new part longer than this is logged as several changes (each item stays small). */
export const maxPartChars = 16_000;

export function partialAnswerKey(jobId: string): { PK: string; SK: string } {
  return { PK: `ANSWER#${jobId}`, SK: 'ANSWER' };
}

export interface DynamoDbPartialAnswersOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
}

export class DynamoDbPartialAnswers implements PartialAnswerStore {
  private readonly log: DynamoDbChangeLog;

  constructor(private readonly options: DynamoDbPartialAnswersOptions) {
    this.log = new DynamoDbChangeLog({
      client: options.client,
      tableName: options.tableName,
      now: options.now,
    });
  }

  async publish(answer: PartialAnswer): Promise<void> {
    if (answer.text.length <= maxKeptAnswerChars)
      await this.options.client.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: {
            ...partialAnswerKey(answer.jobId),
            answer: JSON.stringify(answer),
            [ttlAttribute]: Math.ceil((answer.at + changeRetentionMs) / 1000),
          },
        }),
      );
    await this.log.append(answerChanges(answer));
  }

  async read(jobId: string): Promise<PartialAnswer | undefined> {
    const found = await this.options.client.send(
      new GetCommand({ TableName: this.options.tableName, Key: partialAnswerKey(jobId) }),
    );
    const body = found.Item?.answer;
    return typeof body === 'string' ? (JSON.parse(body) as PartialAnswer) : undefined;
  }
}

/**
 * A part's place among the changes of one stamp (the worker writes these: no stream sequence
 * number): its offset first, so one stream's parts keep their order, then a random number.
 */
const sequence = (offset: number) =>
  `${String(offset).padStart(12, '0')}${String(randomInt(0, 2 ** 47)).padStart(15, '0')}`;

/** The changes a publication logs: its new part, in pieces of at most {@link maxPartChars}. */
export function answerChanges(answer: PartialAnswer): StreamChange[] {
  const changes: StreamChange[] = [];
  for (let offset = answer.offset; offset < answer.text.length; offset += maxPartChars) {
    changes.push({
      sequence: sequence(offset),
      kind: 'answer',
      id: answer.jobId,
      tenant: answer.tenant,
      batchId: answer.batchId,
      workflow: answer.workflow,
      status: answer.status,
      step: answer.step,
      version: answer.version,
      at: answer.at,
      answer: { step: answer.step, offset, text: answer.text.slice(offset, offset + maxPartChars) },
    });
  }
  return changes;
}
