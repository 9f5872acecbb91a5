/**
 * The account checks of `opflow --backend aws doctor`, from the stack's outputs file
 * (`OPFLOW_STACK_OUTPUTS`, `OPFLOW_STACK_NAME` when it holds several stacks): `AlarmTopicArn` (its
 * subscriptions) and `FunctionNames` (each function's concurrency and recursion setting against the
 * account's). Without that file (aws-local, variables only) they are skipped, and said so once.
 */
import { readFileSync } from 'node:fs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { errorMessage } from '../../errors/error-message';
import { alarmTopicCheck, concurrencyCheck, type FunctionFacts, recursionCheck } from './account-checks';
import { LambdaReads, topicSubscriptions } from './account-reads';
import type { AwsClientConfig } from './clients';
import type { StackCheck } from './stack-checks';

/** The functions that send to the queue that triggers them (RecursiveLoop must be Allow). */
export const QUEUE_CHAINED_FUNCTIONS = ['worker', 'ingest'] as const;

const outputsSchema = z.record(
  z.string(),
  z.looseObject({ AlarmTopicArn: z.string().optional(), FunctionNames: z.string().optional() }),
);
const functionNamesSchema = z.record(z.string(), z.string().min(1));

type Env = Readonly<Record<string, string | undefined>>;

/** The alarm topic and the functions, from the outputs file; undefined without one. */
function stackOutputs(env: Env): { topicArn?: string; functions?: Record<string, string> } | undefined {
  const file = env.OPFLOW_STACK_OUTPUTS?.trim();
  if (!file) return undefined;
  const all = outputsSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  const names = Object.keys(all);
  const outputs = all[env.OPFLOW_STACK_NAME?.trim() || (names.length === 1 ? names[0]! : '')] ?? {};
  return {
    ...(outputs.AlarmTopicArn ? { topicArn: outputs.AlarmTopicArn } : {}),
    ...(outputs.FunctionNames
      ? { functions: functionNamesSchema.parse(JSON.parse(outputs.FunctionNames)) }
      : {}),
  };
}

const fix = 'check the credentials (AWS_PROFILE) and the region, and that they may read Lambda and SNS';

export async function accountDoctor(
  env: Env,
  config: AwsClientConfig,
  sqs: SQSClient,
): Promise<StackCheck[]> {
  let outputs: ReturnType<typeof stackOutputs>;
  try {
    outputs = stackOutputs(env);
  } catch (error) {
    return [{ name: 'account', status: 'fail', detail: `OPFLOW_STACK_OUTPUTS: ${errorMessage(error)}`, fix }];
  }
  if (!outputs?.topicArn || !outputs.functions)
    return [
      {
        name: 'account',
        status: 'ok',
        detail:
          'not checked: the alarm subscription, Lambda concurrency and recursion are read with the outputs file of a ' +
          'deployed stack (OPFLOW_STACK_OUTPUTS with AlarmTopicArn and FunctionNames)',
      },
    ];
  const checks: StackCheck[] = [];
  try {
    checks.push(alarmTopicCheck(outputs.topicArn, await topicSubscriptions(config, outputs.topicArn)));
  } catch (error) {
    checks.push({ name: 'alarm topic', status: 'fail', detail: errorMessage(error), fix });
  }
  const lambda = new LambdaReads(config.region, config.credentials ?? sqs.config.credentials);
  try {
    const functions: FunctionFacts[] = await Promise.all(
      Object.entries(outputs.functions).map(([role, name]) => lambda.function(role, name)),
    );
    checks.push(concurrencyCheck(await lambda.account(), functions));
    checks.push(recursionCheck(functions, QUEUE_CHAINED_FUNCTIONS));
  } catch (error) {
    checks.push({ name: 'lambda', status: 'fail', detail: errorMessage(error), fix });
  } finally {
    lambda.destroy();
  }
  return checks;
}
