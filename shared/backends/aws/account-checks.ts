/**
 * What `opflow --backend aws doctor` decides about the account a stack runs in, as pure functions of
 * the services' answers (so each decision is tested without an account): the alarm topic has a
 * confirmed subscription; the functions' reserved concurrency and the caps of their SQS event
 * sources fit the account's unreserved concurrency; every function that sends to the queue that
 * triggers it has Lambda's recursive loop detection set to `Allow`.
 */
import type { StackCheck } from './stack-checks';

/** An SNS subscription as ListSubscriptionsByTopic answers it. */
export interface TopicSubscription {
  Protocol?: string | undefined;
  Endpoint?: string | undefined;
  /** `PendingConfirmation` until the address confirms. */
  SubscriptionArn?: string | undefined;
}

/** Alarms reach someone only through a confirmed subscription of the alarm topic. */
export function alarmTopicCheck(topicArn: string, subscriptions: readonly TopicSubscription[]): StackCheck {
  const name = 'alarm topic';
  const topic = topicArn.split(':').pop();
  const confirmed = subscriptions.filter((s) => s.SubscriptionArn?.startsWith('arn:'));
  const pending = subscriptions.filter((s) => s.SubscriptionArn === 'PendingConfirmation');
  if (confirmed.length > 0)
    return {
      name,
      status: 'ok',
      detail: `${topic} has ${confirmed.length} confirmed subscription(s) (${confirmed.map((s) => s.Protocol).join(', ')})${pending.length ? `, ${pending.length} awaiting confirmation` : ''}`,
    };
  if (pending.length > 0)
    return {
      name,
      status: 'warn',
      detail: `${topic}: ${pending.length} subscription(s) not confirmed yet, so alarms reach nobody`,
      fix: 'open the "AWS Notification - Subscription Confirmation" mail sent at deploy and confirm it (aws sns list-subscriptions-by-topic shows the state)',
    };
  return {
    name,
    status: 'warn',
    detail: `${topic} has no subscription: alarms reach nobody`,
    fix: 'set alarms.email in the stack settings and deploy again, or: aws sns subscribe --topic-arn <AlarmTopicArn> --protocol email --notification-endpoint <address>',
  };
}

/** The account's concurrency, as GetAccountSettings answers it. */
export interface AccountConcurrency {
  /** AccountLimit.ConcurrentExecutions. */
  limit: number;
  /** AccountLimit.UnreservedConcurrentExecutions. */
  unreserved: number;
}

/** One function of the stack and what Lambda says of it. */
export interface FunctionFacts {
  /** Its role in the stack (worker, api, webhooks, ...). */
  role: string;
  name: string;
  /** Reserved concurrency (GetFunctionConcurrency), when set. */
  reserved?: number | undefined;
  /** The maximum concurrency of each of its SQS event sources (ListEventSourceMappings' ScalingConfig); undefined: none set. */
  eventSourceCaps: readonly (number | undefined)[];
  /** GetFunctionRecursionConfig's RecursiveLoop. */
  recursiveLoop?: string | undefined;
}

/** Lambda keeps this much of an account's concurrency unreserved, whatever is reserved. */
export const LAMBDA_MIN_UNRESERVED = 10;

/**
 * The concurrency the stack's functions may take at once against what the account has: reserved
 * concurrency comes out of the account's limit; the event sources' caps out of the unreserved pool,
 * which the api, the webhooks (without reserved concurrency) and the sweeper share with them.
 */
export function concurrencyCheck(
  account: AccountConcurrency,
  functions: readonly FunctionFacts[],
): StackCheck {
  const name = 'lambda concurrency';
  const uncapped = functions.filter(
    (fn) => fn.reserved === undefined && fn.eventSourceCaps.includes(undefined),
  );
  if (uncapped.length > 0)
    return {
      name,
      status: 'fail',
      detail: `${uncapped.map((fn) => fn.name).join(', ')}: an SQS event source without a maximum concurrency can take the account's whole concurrency (${account.limit})`,
      fix: 'deploy the stack again: every event source it creates has a maximum concurrency',
    };
  const queued = functions
    .filter((fn) => fn.reserved === undefined)
    .reduce((sum, fn) => sum + fn.eventSourceCaps.reduce<number>((s, cap) => s + (cap ?? 0), 0), 0);
  const reserved = functions.reduce((sum, fn) => sum + (fn.reserved ?? 0), 0);
  const left = account.unreserved - queued;
  const detail =
    `the account allows ${account.limit} at once, ${account.unreserved} unreserved; the event sources may run ${queued} ` +
    `(${functions
      .filter((fn) => fn.eventSourceCaps.length > 0 && fn.reserved === undefined)
      .map((fn) => `${fn.role} ${fn.eventSourceCaps.join('+')}`)
      .join(
        ', ',
      )})${reserved ? `, ${reserved} reserved by the stack` : ''}, leaving ${Math.max(0, left)} for the api, webhooks and sweeper`;
  if (left < 2)
    return {
      name,
      status: 'warn',
      detail,
      fix:
        'at a peak the job API and the webhooks are throttled (429): ask for a higher "Concurrent executions" quota ' +
        '(Service Quotas, AWS Lambda), or lower worker.maxConcurrency in the stack settings',
    };
  return { name, status: 'ok', detail };
}

/**
 * Each function that sends to its own trigger (the step worker, ingest) must have
 * RecursiveLoop Allow: with Lambda's default, Terminate, a chain of one job is stopped after about 16
 * hops and its messages end in the dead-letter queue.
 */
export function recursionCheck(functions: readonly FunctionFacts[], chained: readonly string[]): StackCheck {
  const name = 'recursive loops';
  const cut = functions.filter((fn) => chained.includes(fn.role) && fn.recursiveLoop !== 'Allow');
  if (cut.length === 0)
    return {
      name,
      status: 'ok',
      detail: `${functions
        .filter((fn) => chained.includes(fn.role))
        .map((fn) => fn.name)
        .join(
          ', ',
        )} may send to their own queues (RecursiveLoop Allow; opflow's message budgets stop a runaway)`,
    };
  return {
    name,
    status: 'fail',
    detail: `${cut.map((fn) => `${fn.name} (${fn.recursiveLoop ?? 'unknown'})`).join(', ')}: Lambda stops a chain after about 16 hops, so long jobs stall in the dead-letter queue`,
    fix: `deploy the stack again (it sets RecursiveLoop Allow), or: ${cut
      .map(
        (fn) => `aws lambda put-function-recursion-config --function-name ${fn.name} --recursive-loop Allow`,
      )
      .join('; ')}`,
  };
}
