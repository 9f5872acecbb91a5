/**
 * How the synthesized template has S3 and Lambda deliver uploads to the ingest function, read from
 * the template (never from a copy of the settings), for the e2e harness and aws-local: the bucket
 * notification's filter (the function whose notification it is: there is one), and the function's
 * asynchronous settings (retries, event age, on-failure queue), timeout and `RecursiveLoop`.
 */
import type { RecursiveLoop } from './recursion';

type Resources = Record<string, { Type?: string; Properties?: Record<string, unknown> }>;

export interface IngestDeliveryRules {
  /** The ingest function's logical id and physical name. */
  functionId: string;
  functionName: string;
  timeoutMs: number;
  recursiveLoop: RecursiveLoop;
  /** The bucket's notification for the function: its bucket's logical id, the events and key filter. */
  notification: {
    bucketId: string;
    events: string[];
    prefix?: string | undefined;
    suffix?: string | undefined;
  };
  /** Lambda's asynchronous settings of the function (absent in the template: Lambda's defaults, 2 and 6 hours). */
  retryAttempts: number;
  maxEventAgeSeconds: number;
  /** The logical id of the on-failure destination's queue. */
  onFailureQueueId: string | undefined;
}

/** The logical id a `{Ref}` or `{Fn::GetAtt: [id, ...]}` names, if it is one. */
export function referencedId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const ref = (value as { Ref?: unknown }).Ref;
  if (typeof ref === 'string') return ref;
  const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
  return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
}

interface LambdaNotification {
  Events?: string[];
  LambdaFunctionArn?: unknown;
  Filter?: { Key?: { FilterRules?: { Name: string; Value: string }[] } };
}

/** The ingest function's delivery rules in `resources` (a template's Resources). */
export function ingestDeliveryRules(resources: Resources): IngestDeliveryRules {
  const notifications = Object.values(resources).flatMap((resource) => {
    if (resource.Type !== 'Custom::S3BucketNotifications') return [];
    const bucketId = referencedId(resource.Properties?.BucketName) ?? '';
    const configuration = resource.Properties?.NotificationConfiguration as
      | { LambdaFunctionConfigurations?: LambdaNotification[] }
      | undefined;
    return (configuration?.LambdaFunctionConfigurations ?? []).map((entry) => ({ bucketId, entry }));
  });
  if (notifications.length !== 1)
    throw new Error(
      `the template has ${notifications.length} bucket notifications to a function; the ingest function's is expected alone`,
    );
  const [{ bucketId, entry }] = notifications as [(typeof notifications)[number]];
  const functionId = referencedId(entry.LambdaFunctionArn);
  const properties = functionId ? resources[functionId]?.Properties : undefined;
  if (!functionId || !properties)
    throw new Error('the bucket notification names no function of the template');
  const rules = entry.Filter?.Key?.FilterRules ?? [];
  const rule = (name: string) => rules.find((r) => r.Name.toLowerCase() === name)?.Value;
  const invokeConfig = Object.values(resources).find(
    (resource) =>
      resource.Type === 'AWS::Lambda::EventInvokeConfig' &&
      referencedId(resource.Properties?.FunctionName) === functionId,
  )?.Properties;
  const onFailure = (invokeConfig?.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)
    ?.OnFailure?.Destination;
  return {
    functionId,
    functionName: String(properties.FunctionName ?? functionId),
    timeoutMs: Number(properties.Timeout ?? 3) * 1000,
    recursiveLoop: (properties.RecursiveLoop ?? 'Terminate') as RecursiveLoop,
    notification: { bucketId, events: entry.Events ?? [], prefix: rule('prefix'), suffix: rule('suffix') },
    retryAttempts: Number(invokeConfig?.MaximumRetryAttempts ?? 2),
    maxEventAgeSeconds: Number(invokeConfig?.MaximumEventAgeInSeconds ?? 21_600),
    onFailureQueueId: referencedId(onFailure),
  };
}
