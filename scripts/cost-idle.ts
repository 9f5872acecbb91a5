/**
 * What an opflow stage costs a month when no job runs, at AWS's list prices (us-east-1, no free
 * tier), itemized per resource of the synthesized template, with the marginal cost of one novelty
 * check beside it (from the figures of `npm run bench:aws-cost`). It synthesizes the stage as `cdk
 * synth` does (functions not bundled: the template is the same) or reads a template file.
 *
 *   npm run cost:idle [-- --stage dev] [--config opflow.stack.json] [--opflow-config opflow.config.json]
 *                     [--template cdk.out/opflow-dev.template.json] [--sweep-ms 200] [--step-ms 300] [--json]
 *
 * Idle is split in two: compute (what runs with no job: the sweeper's timer, the SQS event sources'
 * polling, their logs and reads; the ingest function has no event source: S3 invokes it) and fixed charges (alarms, secrets, KMS keys, the dashboard), which a
 * stage pays whatever it does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { App } from 'aws-cdk-lib';
import * as z from 'zod';
import { PROJECT_ROOT } from '../infra/lib/function-bundling';
import { buildOpflowApp } from '../infra/lib/opflow-app';
import { errorMessage } from '../shared/errors/error-message';
import { referencedId } from './lambda/ingest-rules';

/** When and where the prices below were read (AWS's pricing pages, us-east-1, list prices). */
export const PRICES_TAKEN = { date: '2026-11-27', region: 'us-east-1' } as const;

/**
 * List prices in US dollars, us-east-1, without the free tier (which an account shares between all
 * its stacks). Sources: aws.amazon.com/{cloudwatch,secrets-manager,kms,lambda,sqs,dynamodb,s3,
 * eventbridge,api-gateway}/pricing.
 */
export const PRICES = {
  /** CloudWatch: a standard-resolution alarm, per metric it reads, a month. */
  alarmMetricMonth: 0.1,
  /** CloudWatch: a high-resolution alarm (period under 60 s), per metric, a month. */
  highResolutionAlarmMetricMonth: 0.3,
  /** CloudWatch: a dashboard a month (an account's first three are free). */
  dashboardMonth: 3,
  /** CloudWatch: a custom metric a month, charged by the hour for hours it receives data. */
  customMetricMonth: 0.3,
  /** CloudWatch Logs: ingestion (standard class) per GB. */
  logIngestGb: 0.5,
  /** CloudWatch Logs: storage per GB-month. */
  logStorageGbMonth: 0.03,
  /** Secrets Manager: a secret a month. */
  secretMonth: 0.4,
  /** Secrets Manager: per 10,000 API calls. */
  secretCalls10k: 0.05,
  /** KMS: a customer-managed key a month. */
  kmsKeyMonth: 1,
  /** Lambda: per million requests. */
  lambdaRequestMillion: 0.2,
  /** Lambda on arm64: per GB-second. */
  lambdaArmGbSecond: 0.0000133334,
  /** SQS standard queue: per million requests (a request is up to 64 KiB). */
  sqsRequestMillion: 0.4,
  /** DynamoDB on-demand: per million write request units. */
  dynamoWriteMillion: 0.625,
  /** DynamoDB on-demand: per million read request units. */
  dynamoReadMillion: 0.125,
  /** DynamoDB: storage per GB-month (standard table class). */
  dynamoStorageGbMonth: 0.25,
  /** S3 Standard: per 1,000 PUT, COPY, POST or LIST requests. */
  s3Put1k: 0.005,
  /** S3 Standard: per 1,000 GET requests. */
  s3Get1k: 0.0004,
  /** API Gateway HTTP API: per million requests (first 300 million a month). */
  httpApiRequestMillion: 1,
  /** EventBridge Scheduler: per million invocations after 14 million free a month. */
  schedulerInvocationMillion: 1,
} as const;

/** Hours in AWS's billing month. */
export const HOURS_PER_MONTH = 730;
const MINUTES_PER_MONTH = HOURS_PER_MONTH * 60;

/** What idle compute is estimated from, beside the template (none of it is measured on AWS). */
export interface IdleAssumptions {
  /**
   * Billed milliseconds of a sweep that finds nothing (16 queries of the due index, one of parked
   * keys, one of the callback outbox's due entries, one of the ingest schedule).
   */
  sweepMs: number;
  /** DynamoDB queries of one idle sweep, each at least 0.5 read unit (eventually consistent). */
  sweepQueries: number;
  /** Bytes logged by an idle sweep: START, END and REPORT lines and the `sweep done` line. */
  sweepLogBytes: number;
  /**
   * ReceiveMessage requests a minute that one SQS event source makes on an empty queue: Lambda's
   * pollers long-poll 20 s each; 15 a minute (five pollers) is what idle queues show as
   * NumberOfEmptyReceives.
   */
  emptyReceivesPerMinute: number;
}

export const DEFAULT_IDLE_ASSUMPTIONS: IdleAssumptions = {
  sweepMs: 200,
  sweepQueries: 19,
  sweepLogBytes: 900,
  emptyReceivesPerMinute: 15,
};

/**
 * One novelty check on aws, per job, alone: the costliest measured cell of the current build (pareto
 * sliding 2/s, seed 23, 10 jobs, 28 November at ad2a01a: bench/journal/2026-11-28-aws-cost-matrix.md;
 * every cell: bench/aws-cost.md), and what the bench does not measure, estimated.
 */
export interface JobFigures {
  /** SQS messages sent (each is also received and deleted: three requests). */
  messages: number;
  /** Step-worker invocations. */
  workerRuns: number;
  /** DynamoDB write request units. */
  writeUnits: number;
  /** DynamoDB read request units (not measured: estimated at 4 a worker run). */
  readUnits: number;
  /** Billed milliseconds of a worker run (not measured on AWS: one upstream call and a commit). */
  stepMs: number;
  /** Api invocations and HTTP API requests (the create; status reads are the caller's). */
  apiRequests: number;
  /** S3 PUTs (step outputs, result.json, the Markdown and HTML reports; estimated). */
  s3Puts: number;
  /** Bytes logged a worker run (estimated). */
  logBytesPerRun: number;
}

export const NOVELTY_CHECK: JobFigures = {
  messages: 16.8,
  workerRuns: 16.8,
  writeUnits: 194,
  readUnits: 4 * 16.8,
  stepMs: 300,
  apiRequests: 1,
  s3Puts: 12,
  logBytesPerRun: 2_000,
};

/** The part of a CloudFormation template this script reads. */
const templateSchema = z.object({
  Resources: z.record(
    z.string(),
    z.object({ Type: z.string(), Properties: z.record(z.string(), z.unknown()).optional() }),
  ),
});
export type Template = z.infer<typeof templateSchema>;

/** One line of the bill. */
export interface CostLine {
  /** `compute` runs with no job; `fixed` is paid whatever runs. */
  kind: 'compute' | 'fixed';
  item: string;
  /** How many of what (alarm metrics, secrets, requests a month...). */
  quantity: number;
  unit: string;
  monthly: number;
  basis: string;
}

/** The idle bill of a stage. */
export interface IdleCost {
  lines: CostLine[];
  compute: number;
  fixed: number;
  total: number;
  dashboard: number;
  totalWithoutDashboard: number;
}

const round = (dollars: number) => Math.round(dollars * 10_000) / 10_000;

type Resource = Template['Resources'][string];
const ofType = (template: Template, type: string) =>
  Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

/** Metrics an alarm reads: one, or each MetricStat of its metric math; and whether it is high-resolution. */
function alarmMetrics(alarm: Resource): { metrics: number; highResolution: boolean } {
  const properties = alarm.Properties ?? {};
  const math = properties['Metrics'];
  if (Array.isArray(math)) {
    const stats = math.filter((m) => typeof m === 'object' && m !== null && 'MetricStat' in m);
    const periods = stats.map((m) =>
      Number((m as { MetricStat: { Period?: unknown } }).MetricStat.Period ?? 60),
    );
    return { metrics: stats.length, highResolution: periods.some((p) => p < 60) };
  }
  return { metrics: 1, highResolution: Number(properties['Period'] ?? 60) < 60 };
}

/** Invocations a month of an EventBridge `rate(...)` expression; undefined for a cron expression. */
export function invocationsPerMonth(expression: string): number | undefined {
  const match = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!match) return undefined;
  const every = Number(match[1]);
  const minutes = match[2]!.startsWith('minute') ? 1 : match[2]!.startsWith('hour') ? 60 : 1440;
  return MINUTES_PER_MONTH / (every * minutes);
}

/** The idle monthly bill of the stage in `template`, itemized. */
export function idleCost(
  template: Template,
  assumptions: IdleAssumptions = DEFAULT_IDLE_ASSUMPTIONS,
): IdleCost {
  const lines: CostLine[] = [];
  const functions = new Map(ofType(template, 'AWS::Lambda::Function'));
  const functionName = (id: string) => String(functions.get(id)?.Properties?.['FunctionName'] ?? id);

  // Timers: EventBridge rules that invoke a function on a rate (the sweeper).
  for (const [id, rule] of ofType(template, 'AWS::Events::Rule')) {
    const expression = String(rule.Properties?.['ScheduleExpression'] ?? '');
    const perMonth = invocationsPerMonth(expression);
    if (perMonth === undefined) continue;
    const targets = (rule.Properties?.['Targets'] as { Arn?: unknown }[] | undefined) ?? [];
    for (const target of targets) {
      const fnId = referencedId(target.Arn);
      const fn = fnId ? functions.get(fnId) : undefined;
      if (!fnId || !fn) continue;
      const memoryGb = Number(fn.Properties?.['MemorySize'] ?? 128) / 1024;
      const gbSeconds = perMonth * (assumptions.sweepMs / 1000) * memoryGb;
      const name = functionName(fnId);
      lines.push({
        kind: 'compute',
        item: `${name}: invocations (${expression}, rule ${id})`,
        quantity: perMonth,
        unit: 'invocations',
        monthly: (perMonth / 1e6) * PRICES.lambdaRequestMillion + gbSeconds * PRICES.lambdaArmGbSecond,
        basis: `${perMonth} × ($${PRICES.lambdaRequestMillion}/M + ${assumptions.sweepMs} ms × ${memoryGb} GB × $${PRICES.lambdaArmGbSecond}/GB-s)`,
      });
      const reads = perMonth * assumptions.sweepQueries * 0.5;
      lines.push({
        kind: 'compute',
        item: `${name}: DynamoDB reads of an idle run`,
        quantity: reads,
        unit: 'read units',
        monthly: (reads / 1e6) * PRICES.dynamoReadMillion,
        basis: `${assumptions.sweepQueries} queries × 0.5 RRU × ${perMonth} × $${PRICES.dynamoReadMillion}/M`,
      });
      const gb = (perMonth * assumptions.sweepLogBytes) / 1e9;
      lines.push({
        kind: 'compute',
        item: `${name}: logs of an idle run`,
        quantity: gb,
        unit: 'GB',
        monthly: gb * PRICES.logIngestGb + gb * PRICES.logStorageGbMonth,
        basis: `${assumptions.sweepLogBytes} B × ${perMonth} ingested at $${PRICES.logIngestGb}/GB, kept a month at most at $${PRICES.logStorageGbMonth}/GB-month`,
      });
    }
  }

  // SQS event sources: Lambda long-polls each queue all the time; empty receives are billed requests.
  const queues = new Map(ofType(template, 'AWS::SQS::Queue'));
  for (const [id, mapping] of ofType(template, 'AWS::Lambda::EventSourceMapping')) {
    const queueId = referencedId(mapping.Properties?.['EventSourceArn']);
    if (!queueId || !queues.has(queueId)) continue;
    const requests = assumptions.emptyReceivesPerMinute * MINUTES_PER_MONTH;
    const fnId = referencedId(mapping.Properties?.['FunctionName']);
    lines.push({
      kind: 'compute',
      item: `SQS polling by the event source of ${fnId ? functionName(fnId) : id}`,
      quantity: requests,
      unit: 'requests',
      monthly: (requests / 1e6) * PRICES.sqsRequestMillion,
      basis: `${assumptions.emptyReceivesPerMinute} empty receives a minute × ${MINUTES_PER_MONTH} min × $${PRICES.sqsRequestMillion}/M`,
    });
  }

  // Fixed charges.
  let standardMetrics = 0;
  let highResolutionMetrics = 0;
  const alarms = ofType(template, 'AWS::CloudWatch::Alarm');
  for (const [, alarm] of alarms) {
    const { metrics, highResolution } = alarmMetrics(alarm);
    if (highResolution) highResolutionMetrics += metrics;
    else standardMetrics += metrics;
  }
  if (alarms.length > 0) {
    lines.push({
      kind: 'fixed',
      item: `CloudWatch alarms (${alarms.length})`,
      quantity: standardMetrics,
      unit: 'alarm metrics',
      monthly:
        standardMetrics * PRICES.alarmMetricMonth +
        highResolutionMetrics * PRICES.highResolutionAlarmMetricMonth,
      basis: `${standardMetrics} metrics × $${PRICES.alarmMetricMonth}${highResolutionMetrics ? ` + ${highResolutionMetrics} high-resolution × $${PRICES.highResolutionAlarmMetricMonth}` : ''} (metric math: each metric read)`,
    });
  }
  const fixedCount = (type: string, item: string, unit: string, price: number, basis: string) => {
    const count = ofType(template, type).length;
    if (count > 0) lines.push({ kind: 'fixed', item, quantity: count, unit, monthly: count * price, basis });
  };
  fixedCount(
    'AWS::SecretsManager::Secret',
    'Secrets Manager secrets',
    'secrets',
    PRICES.secretMonth,
    `$${PRICES.secretMonth} a secret`,
  );
  fixedCount(
    'AWS::KMS::Key',
    'KMS customer-managed keys',
    'keys',
    PRICES.kmsKeyMonth,
    `$${PRICES.kmsKeyMonth} a key`,
  );
  fixedCount(
    'AWS::CloudWatch::Dashboard',
    'CloudWatch dashboard',
    'dashboards',
    PRICES.dashboardMonth,
    `$${PRICES.dashboardMonth} a dashboard (an account's first three are free)`,
  );

  // Priced by use only: nothing at idle (listed, so the bill names every kind of resource it has).
  const byUse: [string, string][] = [
    [
      'AWS::DynamoDB::Table',
      'on demand: requests by use; storage of the config item and idle records, under 1 MB',
    ],
    ['AWS::S3::Bucket', 'requests by use; storage of reports by use'],
    ['AWS::SQS::Queue', 'requests only (polling above)'],
    ['AWS::ApiGatewayV2::Api', 'HTTP API: requests only'],
    [
      'AWS::Scheduler::Schedule',
      'each fire is a job (work, not idle); Scheduler invocations free under 14 million a month',
    ],
    ['AWS::SNS::Topic', 'alarm notifications: the first 1,000 emails a month are free'],
  ];
  for (const [type, basis] of byUse) {
    const count = ofType(template, type).length;
    if (count > 0)
      lines.push({
        kind: 'fixed',
        item: `${type.split('::').slice(1).join(' ')} (${count})`,
        quantity: count,
        unit: 'resources',
        monthly: 0,
        basis,
      });
  }

  const sum = (kind: CostLine['kind']) =>
    lines.filter((l) => l.kind === kind).reduce((s, l) => s + l.monthly, 0);
  const compute = sum('compute');
  const fixed = sum('fixed');
  const dashboard = ofType(template, 'AWS::CloudWatch::Dashboard').length * PRICES.dashboardMonth;
  return {
    lines: lines.map((line) => ({ ...line, monthly: round(line.monthly) })),
    compute: round(compute),
    fixed: round(fixed),
    total: round(compute + fixed),
    dashboard,
    totalWithoutDashboard: round(compute + fixed - dashboard),
  };
}

/** The marginal cost of one job of `figures`, with the memory of the template's step worker. */
export function jobCost(
  template: Template,
  figures: JobFigures = NOVELTY_CHECK,
): { lines: { item: string; dollars: number; basis: string }[]; total: number; metricHour: number } {
  const worker = ofType(template, 'AWS::Lambda::Function').find(([, fn]) =>
    String(fn.Properties?.['FunctionName'] ?? '').endsWith('-step-worker'),
  );
  const memoryGb = Number(worker?.[1].Properties?.['MemorySize'] ?? 512) / 1024;
  const lines = [
    {
      item: 'SQS requests',
      dollars: ((figures.messages * 3) / 1e6) * PRICES.sqsRequestMillion,
      basis: `${figures.messages} messages × 3 (send, receive, delete)`,
    },
    {
      item: 'Lambda: step worker',
      dollars:
        (figures.workerRuns / 1e6) * PRICES.lambdaRequestMillion +
        figures.workerRuns * (figures.stepMs / 1000) * memoryGb * PRICES.lambdaArmGbSecond,
      basis: `${figures.workerRuns} runs × ${figures.stepMs} ms × ${memoryGb} GB`,
    },
    {
      item: 'HTTP API and api function',
      dollars:
        (figures.apiRequests / 1e6) * (PRICES.httpApiRequestMillion + PRICES.lambdaRequestMillion) +
        figures.apiRequests * 0.1 * 0.5 * PRICES.lambdaArmGbSecond,
      basis: `${figures.apiRequests} request (the create), 100 ms × 0.5 GB`,
    },
    {
      item: 'DynamoDB writes',
      dollars: (figures.writeUnits / 1e6) * PRICES.dynamoWriteMillion,
      basis: `${figures.writeUnits} write units (measured)`,
    },
    {
      item: 'DynamoDB reads',
      dollars: (figures.readUnits / 1e6) * PRICES.dynamoReadMillion,
      basis: `${figures.readUnits.toFixed(1)} read units (estimated: 4 a run)`,
    },
    {
      item: 'S3 puts',
      dollars: (figures.s3Puts / 1000) * PRICES.s3Put1k,
      basis: `${figures.s3Puts} PUTs (estimated)`,
    },
    {
      item: 'CloudWatch Logs',
      dollars: ((figures.workerRuns * figures.logBytesPerRun) / 1e9) * PRICES.logIngestGb,
      basis: `${figures.logBytesPerRun} B a run (estimated)`,
    },
  ];
  const total = lines.reduce((sum, line) => sum + line.dollars, 0);
  // The pipeline's six metrics are charged for each hour they receive data: once an hour with any job.
  const metricHour = (6 * PRICES.customMetricMonth) / HOURS_PER_MONTH;
  return { lines, total, metricHour };
}

/** The template of a stage, synthesized as `cdk synth` does (functions not bundled). */
export function synthesizeTemplate(context: Record<string, string>): {
  stackName: string;
  template: Template;
} {
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const app = new App({ context: { ...cdkJson.context, ...context, 'aws:cdk:bundling-stacks': [] } });
  const stack = buildOpflowApp(app);
  const template = app.synth().getStackByName(stack.stackName).template as unknown;
  return { stackName: stack.stackName, template: templateSchema.parse(template) };
}

/** Reads a template file, naming it in the error when it is not one. */
export function readTemplate(file: string): Template {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: not a JSON template (${errorMessage(error)})`);
  }
  const parsed = templateSchema.safeParse(value);
  if (!parsed.success)
    throw new Error(`${file}: not a CloudFormation template (${parsed.error.issues[0]?.message})`);
  return parsed.data;
}

/** Dollars with two decimals, or two significant digits under a cent ($0.000092). */
const dollars = (value: number) =>
  value > 0 && value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(2)}`;

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    throw new Error(`--${name} must be a positive number, got ${value}`);
  return number;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      stage: { type: 'string' },
      config: { type: 'string' },
      'opflow-config': { type: 'string' },
      template: { type: 'string' },
      'sweep-ms': { type: 'string' },
      'step-ms': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run cost:idle -- [--stage <name>] [--config <stack settings file>] [--opflow-config <file>]\n' +
        '                          [--template <synthesized template .json>] [--sweep-ms <n>] [--step-ms <n>] [--json]\n' +
        "The idle monthly cost of a stage at list prices (us-east-1, no free tier) and one novelty check's marginal cost.\n",
    );
    return;
  }
  const source = values.template
    ? { stackName: values.template, template: readTemplate(values.template) }
    : synthesizeTemplate({
        ...(values.stage ? { stage: values.stage } : {}),
        ...(values.config ? { config: values.config } : {}),
        ...(values['opflow-config'] ? { opflowConfig: values['opflow-config'] } : {}),
      });
  const idle = idleCost(source.template, {
    ...DEFAULT_IDLE_ASSUMPTIONS,
    sweepMs: positive('sweep-ms', values['sweep-ms'], DEFAULT_IDLE_ASSUMPTIONS.sweepMs),
  });
  const job = jobCost(source.template, {
    ...NOVELTY_CHECK,
    stepMs: positive('step-ms', values['step-ms'], NOVELTY_CHECK.stepMs),
  });
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ prices: PRICES, taken: PRICES_TAKEN, stack: source.stackName, idle, job }, null, 2)}\n`,
    );
    return;
  }
  const out: string[] = [
    `${source.stackName}: idle monthly cost at list prices (${PRICES_TAKEN.region}, ${PRICES_TAKEN.date}, no free tier)`,
    '',
    '| kind | item | quantity | a month | basis |',
    '|---|---|---:|---:|---|',
    ...idle.lines.map(
      (l) =>
        `| ${l.kind} | ${l.item} | ${Number(l.quantity.toFixed(4))} ${l.unit} | ${dollars(l.monthly)} | ${l.basis} |`,
    ),
    '',
    `compute at idle: ${dollars(idle.compute)} a month (goal: at most $0.50)`,
    `fixed charges: ${dollars(idle.fixed)} a month`,
    `the stage at idle: ${dollars(idle.total)} a month; without the dashboard: ${dollars(idle.totalWithoutDashboard)} (goal: at most $3)`,
    '',
    'One novelty check (bench:aws-cost, alone, the costliest measured cell), marginal:',
    ...job.lines.map((l) => `  ${l.item.padEnd(26)} ${dollars(l.dollars).padStart(10)}  ${l.basis}`),
    `  ${'total'.padEnd(26)} ${dollars(job.total).padStart(10)}  (${Math.floor(1 / job.total)} checks a dollar; the Open Platform's own charges apart)`,
    `  and once for each hour with any job: the pipeline's 6 custom metrics, ${dollars(job.metricHour)}`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`cost:idle: ${errorMessage(error)}\n`);
    process.exit(1);
  }
}
