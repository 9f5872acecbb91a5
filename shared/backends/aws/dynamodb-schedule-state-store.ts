/** Schedule state on the job table: one item `SCHED#<name>` / `STATE`, written with compare-and-set. */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ScheduleState, ScheduleStateStore } from '../../engine/schedule-ports';

const key = (name: string) => ({ PK: `SCHED#${encodeURIComponent(name)}`, SK: 'STATE' });

export class DynamoDbScheduleStateStore implements ScheduleStateStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The schedules `list` reads (DynamoDB cannot list them without a scan or an index). */
    private readonly names: readonly string[] = [],
  ) {}

  async get(name: string): Promise<ScheduleState | undefined> {
    const answer = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key(name), ConsistentRead: true }),
    );
    return answer.Item ? (JSON.parse(String(answer.Item.state)) as ScheduleState) : undefined;
  }

  async list(): Promise<ScheduleState[]> {
    const found = await Promise.all(this.names.map((name) => this.get(name)));
    return found.filter((state): state is ScheduleState => state !== undefined);
  }

  async put(next: ScheduleState, expected: ScheduleState | undefined): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key(next.name), state: JSON.stringify(next), updatedAt: next.updatedAt },
          ConditionExpression: expected === undefined ? 'attribute_not_exists(PK)' : 'updatedAt = :seen',
          ...(expected === undefined ? {} : { ExpressionAttributeValues: { ':seen': expected.updatedAt } }),
        }),
      );
      return true;
    } catch (error) {
      if (
        error instanceof ConditionalCheckFailedException ||
        (error as { name?: string }).name === 'ConditionalCheckFailedException'
      )
        return false;
      throw error;
    }
  }
}
