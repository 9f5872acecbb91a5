/**
 * Records every AWS call the runtime's real SDK clients make (command, input, outcome), and turns
 * each into the IAM permissions it needs on real AWS, so a test can check a function's role in the
 * synthesized template allows exactly what its code does. Resources are written the way the template
 * is rendered by `renderTemplateValue`: `<LogicalId.Arn>/...`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';

/** Pseudo parameters as rendered in resources (any fixed values do: both sides use these). */
export const PSEUDO = { partition: 'aws', region: 'eu-west-1', account: '123456789012' } as const;

export type AwsService = 'dynamodb' | 'sqs' | 's3' | 'secretsmanager';

/** One SDK call: which command, with what input, and the error it ended with (if any). */
export interface RecordedCall {
  service: AwsService;
  command: string;
  input: Record<string, unknown>;
  error?: string | undefined;
}

/** An IAM action on a resource, e.g. `dynamodb:Query` on `<JobTable.Arn>/index/due`. */
export interface Permission {
  action: string;
  resource: string;
  /** A DynamoDB call's partition keys (`dynamodb:LeadingKeys`): an item's, a table Query's `PK = :v`; else undefined. */
  leadingKeys?: string[] | undefined;
}

/** An item key's partition key value, from a document client's input or a low-level one. */
function partitionKeyOf(key: unknown): string | undefined {
  const pk = (key as { PK?: unknown } | undefined)?.PK;
  if (typeof pk === 'string') return pk;
  const typed = (pk as { S?: unknown } | undefined)?.S;
  return typeof typed === 'string' ? typed : undefined;
}

/** The partition keys an item call touches, when every one is known. */
function leadingKeysOf(keys: unknown[]): string[] | undefined {
  const values = keys.map(partitionKeyOf);
  return values.every((value) => value !== undefined) ? (values as string[]) : undefined;
}

/** The partition a Query of the table names (`PK = :value ...`), when its key condition says it. */
function queriedPartition(input: Record<string, unknown>): string[] | undefined {
  const match = /^\s*PK\s*=\s*(:\w+)/.exec(String(input['KeyConditionExpression'] ?? ''));
  const values = input['ExpressionAttributeValues'] as Record<string, unknown> | undefined;
  const value = match ? partitionKeyOf({ PK: values?.[match[1]!] }) : undefined;
  return value === undefined ? undefined : [value];
}

/** Where each physical name of the emulated deployment lives in the template (logical ids). */
export interface ResourceNames {
  table: { name: string; logicalId: string };
  queue: { url: string; logicalId: string };
  bucket: { name: string; logicalId: string };
}

type MiddlewareClient = {
  middlewareStack: {
    add(
      middleware: (
        next: (args: { input: Record<string, unknown> }) => Promise<unknown>,
        context: { commandName?: string },
      ) => (args: { input: Record<string, unknown> }) => Promise<unknown>,
      options: { step: 'initialize'; priority: 'low'; name: string },
    ): void;
  };
};

/** A recorder: `instrument` is given to the runtime (as `instrumentAwsClient`), `calls` fills up. */
export function createCallRecorder() {
  const calls: RecordedCall[] = [];
  const serviceOf = (client: unknown): AwsService => {
    if (client instanceof DynamoDBClient) return 'dynamodb';
    if (client instanceof SQSClient) return 'sqs';
    if (client instanceof S3Client) return 's3';
    if (client instanceof SecretsManagerClient) return 'secretsmanager';
    throw new Error('an SDK client of a service the recorder does not know');
  };
  const instrument = <T>(client: T): T => {
    const service = serviceOf(client);
    (client as unknown as MiddlewareClient).middlewareStack.add(
      (next, context) => async (args) => {
        const call: RecordedCall = {
          service,
          command: (context.commandName ?? 'unknown').replace(/Command$/, ''),
          input: args.input,
        };
        calls.push(call);
        try {
          return await next(args);
        } catch (error) {
          call.error = (error as { name?: string }).name ?? 'Error';
          throw error;
        }
      },
      { step: 'initialize', priority: 'low', name: 'opflowCallRecorder' },
    );
    return client;
  };
  /** The calls recorded since the last `take()`. */
  const take = (): RecordedCall[] => calls.splice(0, calls.length);
  return { instrument, take };
}

/** The permissions real AWS checks for `call`. */
export function permissionsOf(call: RecordedCall, names: ResourceNames): Permission[] {
  const input = call.input;
  const table = (tableName: unknown) => {
    if (tableName !== names.table.name) throw new Error(`a call to an unknown table ${String(tableName)}`);
    return `<${names.table.logicalId}.Arn>`;
  };
  switch (call.service) {
    case 'dynamodb': {
      if (call.command === 'BatchGetItem') {
        return Object.entries(input['RequestItems'] as Record<string, { Keys: unknown[] }>).map(
          ([name, request]) => ({
            action: 'dynamodb:BatchGetItem',
            resource: table(name),
            leadingKeys: leadingKeysOf(request.Keys),
          }),
        );
      }
      if (call.command === 'TransactWriteItems') {
        // No IAM action of its own: each item needs the permission of its kind.
        const kinds = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
        };
        type Item = { TableName: string; Key?: unknown; Item?: unknown };
        return (input['TransactItems'] as Record<string, Item>[]).flatMap((item) =>
          Object.entries(kinds)
            .filter(([kind]) => item[kind])
            .map(([kind, action]) => ({
              action: `dynamodb:${action}`,
              resource: table(item[kind]?.TableName),
              leadingKeys: leadingKeysOf([item[kind]?.Key ?? item[kind]?.Item]),
            })),
        );
      }
      const index = input['IndexName'] === undefined ? '' : `/index/${String(input['IndexName'])}`;
      const item = input['Key'] ?? input['Item'];
      return [
        {
          action: `dynamodb:${call.command}`,
          resource: `${table(input['TableName'])}${index}`,
          leadingKeys:
            item !== undefined
              ? leadingKeysOf([item])
              : call.command === 'Query' && index === ''
                ? queriedPartition(input)
                : undefined,
        },
      ];
    }
    case 'sqs': {
      if (input['QueueUrl'] !== names.queue.url)
        throw new Error(`a call to an unknown queue ${String(input['QueueUrl'])}`);
      // SendMessageBatch is authorized as SendMessage (likewise DeleteMessageBatch, ...).
      const action = `sqs:${call.command.replace(/Batch$/, '')}`;
      return [{ action, resource: `<${names.queue.logicalId}.Arn>` }];
    }
    case 's3': {
      if (input['Bucket'] !== names.bucket.name)
        throw new Error(`a call to an unknown bucket ${String(input['Bucket'])}`);
      const bucket = `<${names.bucket.logicalId}.Arn>`;
      if (call.command === 'ListObjectsV2') return [{ action: 's3:ListBucket', resource: bucket }];
      const object = { action: `s3:${call.command}`, resource: `${bucket}/${String(input['Key'])}` };
      // S3 answers a missing key with 404 only to a caller allowed to list the bucket (403 otherwise):
      // code that reads a missing object as "absent" needs s3:ListBucket too.
      return call.error === 'NoSuchKey' ? [object, { action: 's3:ListBucket', resource: bucket }] : [object];
    }
    case 'secretsmanager': {
      // Secret ARNs end in "-" and six random characters.
      const arn = `arn:${PSEUDO.partition}:secretsmanager:${PSEUDO.region}:${PSEUDO.account}:secret:${String(input['SecretId'])}-AbCdEf`;
      return [{ action: `secretsmanager:${call.command}`, resource: arn }];
    }
  }
}

/**
 * A template value (string, `Ref`, `Fn::GetAtt`, `Fn::Join`) as a string: `<Id.Arn>` for an
 * attribute, `<Id>` for a resource's Ref, the fixed PSEUDO values for pseudo parameters.
 */
export function renderTemplateValue(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  const node = value as Record<string, unknown>;
  if ('Ref' in node) {
    const pseudo: Record<string, string> = {
      'AWS::Partition': PSEUDO.partition,
      'AWS::Region': PSEUDO.region,
      'AWS::AccountId': PSEUDO.account,
    };
    return pseudo[String(node['Ref'])] ?? `<${String(node['Ref'])}>`;
  }
  if ('Fn::GetAtt' in node) {
    const [id, attribute] = node['Fn::GetAtt'] as [string, string];
    return `<${id}.${attribute}>`;
  }
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts.map(renderTemplateValue).join(separator);
  }
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

/** An IAM pattern (`*` any run of characters, `?` one) as a RegExp. */
function iamPattern(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

/** An Allow statement of a policy, with its actions and rendered resources. */
export interface RenderedStatement {
  actions: string[];
  resources: string[];
  /**
   * Its `dynamodb:LeadingKeys` condition (`ForAllValues:StringEquals` or `StringLike`): every partition
   * key a call touches must match one of the patterns. Other conditions are not modelled.
   */
  leadingKeys?: { like: boolean; values: string[] } | undefined;
}

type Condition = Record<string, Record<string, string | string[]>>;

/** A statement's LeadingKeys condition: patterns (StringLike) or exact values (StringEquals). */
function leadingKeyCondition(condition: Condition | undefined): RenderedStatement['leadingKeys'] {
  const like = condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
  const equals = condition?.['ForAllValues:StringEquals']?.['dynamodb:LeadingKeys'];
  const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);
  if (like !== undefined) return { like: true, values: list(like) };
  if (equals !== undefined) return { like: false, values: list(equals) };
  return undefined;
}

/** Whether a statement's LeadingKeys condition (if any) lets every partition key of `permission` by. */
function leadingKeysAllowed(statement: RenderedStatement, permission: Permission): boolean {
  const condition = statement.leadingKeys;
  if (condition === undefined) return true;
  const matches = (key: string) =>
    condition.values.some((value) => (condition.like ? iamPattern(value).test(key) : value === key));
  return permission.leadingKeys?.every(matches) ?? false;
}

/** Every Allow statement attached to the role `roleId` in `resources` (a template's Resources). */
export function allowStatementsOfRole(
  resources: Record<string, { Type: string; Properties: Record<string, unknown> }>,
  roleId: string,
): RenderedStatement[] {
  type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: Condition };
  const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
  return Object.values(resources)
    .filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' &&
        JSON.stringify(resource.Properties['Roles']) === JSON.stringify([{ Ref: roleId }]),
    )
    .flatMap((policy) => (policy.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement)
    .filter((statement) => statement.Effect === 'Allow')
    .map((statement) => ({
      actions: list(statement.Action),
      resources: list(statement.Resource).map(renderTemplateValue),
      leadingKeys: leadingKeyCondition(statement.Condition),
    }));
}

/** Whether one of `statements` allows `permission`. */
export function allows(statements: RenderedStatement[], permission: Permission): boolean {
  return statements.some(
    (statement) =>
      statement.actions.some((action) => iamPattern(action).test(permission.action)) &&
      statement.resources.some((resource) => iamPattern(resource).test(permission.resource)) &&
      leadingKeysAllowed(statement, permission),
  );
}
