/**
 * The stage's optional customer-managed KMS key (`kms` in the stage settings): one key for the job
 * table, the report bucket and every queue, created with yearly rotation or imported by ARN, and
 * granted to every opflow function, since each reads and writes the table.
 */
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Policy } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config';
import { PipelineFunction } from './pipeline-function';

/** Settings of {@link stageDataKey}. */
export interface StageDataKeyProps {
  readonly kms: StageConfig['kms'];
  /** The stack's physical prefix; the created key's alias is `alias/<prefix>-data`. */
  readonly prefix: string;
  /**
   * `retain` keeps a created key when the stack is deleted or the key is turned off: reports
   * written under it stay readable. `destroy` schedules its deletion (a 30-day waiting period).
   */
  readonly removalPolicy: 'retain' | 'destroy';
}

/** The stage's key: undefined when `kms.enabled` is off (AWS-owned keys and SSE-SQS then). */
export function stageDataKey(scope: Construct, id: string, props: StageDataKeyProps): IKey | undefined {
  if (!props.kms.enabled) return undefined;
  if (props.kms.keyArn) return Key.fromKeyArn(scope, id, props.kms.keyArn);
  return new Key(scope, id, {
    description: `opflow ${props.prefix}: the job table, the report bucket and the queues`,
    enableKeyRotation: true,
    alias: `alias/${props.prefix}-data`,
    removalPolicy: props.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });
}

/**
 * Lets every opflow function under `scope` use `key` for data (Decrypt, GenerateDataKey): each reads
 * and writes the table, and some statements (the sweeper's, the api's S3 ones) are not grant* calls
 * that would add the key themselves. Call once every function exists.
 */
export function grantDataKeyToFunctions(scope: Construct, key: IKey): void {
  for (const construct of scope.node.findAll()) {
    if (construct instanceof PipelineFunction)
      key.grant(construct.role, 'kms:Decrypt', 'kms:GenerateDataKey');
  }
  acknowledgeKeyActionFamilies(scope);
}

/** The KMS action families CDK's grant* methods name when a table, bucket or queue has a key. */
const KEY_ACTION_FAMILIES = ['kms:GenerateDataKey*', 'kms:ReEncrypt*'] as const;

/**
 * cdk-nag reports each policy whose statements name a KMS action family; they come from grant* on
 * the stage's own table, bucket and queues and name only the stage's key. Acknowledged where present.
 */
function acknowledgeKeyActionFamilies(scope: Construct): void {
  const stack = Stack.of(scope);
  for (const policy of scope.node.findAll()) {
    if (!(policy instanceof Policy)) continue;
    const document = stack.resolve(policy.document) as { Statement?: { Action?: string | string[] }[] };
    const actions = new Set(
      (document.Statement ?? []).flatMap((statement) => [statement.Action ?? []].flat()),
    );
    for (const family of KEY_ACTION_FAMILIES.filter((action) => actions.has(action))) {
      Validations.of(policy).acknowledge({
        id: `AwsSolutions-IAM5[Action::${family}]`,
        reason:
          `${family} comes from grant* on the stage's own table, bucket or queues with a customer-managed key: ` +
          'CDK names the family; the statement names only that key.',
      });
    }
  }
}
