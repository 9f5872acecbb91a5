/**
 * What `opflow --backend aws doctor` asks of the cloud (the aws backend's `work.checks()`): the
 * stack's outputs were read, its resources answer (stack-checks.ts), and the account's alarm topic,
 * concurrency and recursion settings suit it (account-doctor.ts). Loaded only when asked for: no
 * function's cold start holds the checks or the SDK commands they send.
 */
import { accountDoctor } from '../../backends/aws/account-doctor';
import type { AwsClients } from '../../backends/aws/clients';
import { stackChecks } from '../../backends/aws/stack-checks';
import type { HealthCheck } from '../backend';
import type { AwsRuntimeConfig } from './config';

export async function awsDoctorChecks(
  clients: AwsClients,
  config: AwsRuntimeConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<HealthCheck[]> {
  const outputs: HealthCheck = {
    name: 'stack outputs',
    status: 'ok',
    detail: `table ${config.tableName}, bucket ${config.bucketName}, queue ${config.queueUrl.split('/').pop()}`,
  };
  return [
    outputs,
    ...(await stackChecks(clients, config)),
    ...(await accountDoctor(env, config, clients.sqs)),
  ];
}
