/**
 * What `npm run bench:aws-cost` counts, and how: HTTP proxies in front of DynamoDB Local and of the
 * functions' SQS endpoint that count what the functions asked of each service, and the list prices
 * that turn the counts into dollars. Kept apart from the bench so a test can hold the counts
 * against what the emulators saw (test/e2e/aws/aws-cost-accounting.test.ts).
 *
 * - DynamoDB: every request gets `ReturnConsumedCapacity: INDEXES`; the proxy sums what DynamoDB
 *   Local answers, writes and reads apart. A write refused by its condition answers no capacity, but
 *   AWS bills it (at least one unit per item): counted apart, priced at one unit each.
 * - SQS: the functions' sends (requests, and the messages in them) and their other requests, by
 *   action. The event source's receives and deletes are not the functions' own: they are priced per
 *   worker invocation (one receive and one batch delete each, as Lambda's poller does).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PRICES } from '../scripts/cost-idle';

/** Consumed capacity of one kind of DynamoDB request (writes or reads). */
export interface UnitTally {
  /** Units, table and indexes together. */
  total: number;
  /** Units by index name (the table's own are `total` less these). */
  indexes: Record<string, number>;
  /** Requests that answered success. */
  requests: number;
  /** Units by the kind of item (the prefix of its PK: JOB, HIST, RATE, ...). */
  byKind: Record<string, number>;
}

export interface DynamoTally {
  writes: UnitTally;
  reads: UnitTally;
  /** Writes refused by their condition: no capacity answered, AWS bills at least one unit each. */
  conditionFailures: number;
}

export interface SqsTally {
  /** SendMessage and SendMessageBatch requests that succeeded. */
  sendRequests: number;
  /** Messages those requests put on a queue. */
  messagesSent: number;
  /** Every request by action (SendMessage, ChangeMessageVisibility, ...), successful or not. */
  byAction: Record<string, number>;
}

export interface CountingProxy<T> {
  /** The endpoint to give the functions in place of the service's. */
  url: string;
  tally: T;
  close(): Promise<void>;
}

const writeActions = /^(PutItem|UpdateItem|DeleteItem|TransactWriteItems|BatchWriteItem)$/;
const readActions = /^(GetItem|Query|Scan|BatchGetItem|TransactGetItems)$/;

/** The kind of item a request touches: the prefix of its (first) item's or key's PK. */
export function itemKind(request: Record<string, unknown>): string {
  const transact = request.TransactItems as Record<string, { Item?: unknown; Key?: unknown }>[] | undefined;
  const batch = request.RequestItems as Record<string, unknown[]> | undefined;
  const first = transact?.[0] ? Object.values(transact[0])[0] : batch ? undefined : request;
  let pk = ((first?.Item ?? first?.Key) as { PK?: { S?: string } } | undefined)?.PK?.S;
  if (!pk && batch) {
    const entry = Object.values(batch)[0]?.[0] as
      | { PutRequest?: { Item?: { PK?: { S?: string } } }; DeleteRequest?: { Key?: { PK?: { S?: string } } } }
      | { Keys?: { PK?: { S?: string } }[] }
      | undefined;
    pk =
      (entry as { PutRequest?: { Item?: { PK?: { S?: string } } } })?.PutRequest?.Item?.PK?.S ??
      (entry as { DeleteRequest?: { Key?: { PK?: { S?: string } } } })?.DeleteRequest?.Key?.PK?.S;
  }
  if (!pk) {
    // A query names its key in its values (`:pk`), not in a Key.
    const values = request.ExpressionAttributeValues as Record<string, { S?: string }> | undefined;
    pk = Object.values(values ?? {}).find((value) => typeof value.S === 'string' && value.S.includes('#'))?.S;
  }
  return pk ? (pk.split('#')[0] ?? 'other') : 'other';
}

interface Exchange {
  action: string;
  request: Record<string, unknown> | undefined;
  status: number;
  answer: () => Record<string, unknown>;
}

/**
 * An HTTP proxy to `target` for an AWS JSON-protocol service: `rewrite` may change each request's
 * body (parsed), `seen` reads each exchange once answered.
 */
async function jsonProxy<T>(
  target: string,
  tally: T,
  rewrite: (action: string, body: Record<string, unknown>) => void,
  seen: (exchange: Exchange) => void,
): Promise<CountingProxy<T>> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      const action = String(req.headers['x-amz-target'] ?? '').replace(/^[^.]*\./, '');
      let parsed: Record<string, unknown> | undefined;
      if (body.length > 0) {
        parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        rewrite(action, parsed);
        body = Buffer.from(JSON.stringify(parsed));
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'content-length': String(body.length), host: upstream.host },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const text = Buffer.concat(parts);
            const status = answer.statusCode ?? 500;
            seen({
              action,
              request: parsed,
              status,
              answer: () =>
                text.length > 0 ? (JSON.parse(text.toString('utf8')) as Record<string, unknown>) : {},
            });
            res.writeHead(status, answer.headers);
            res.end(text);
          });
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tally,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const emptyUnits = (): UnitTally => ({ total: 0, indexes: {}, requests: 0, byKind: {} });

type Consumed = {
  CapacityUnits?: number;
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
  LocalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
};

/** Adds one answer's ConsumedCapacity (one entry, or one per table) to `tally`. */
function addConsumed(tally: UnitTally, kind: string, consumed: unknown): void {
  tally.requests += 1;
  for (const entry of (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as Consumed[]) {
    tally.total += entry.CapacityUnits ?? 0;
    tally.byKind[kind] = (tally.byKind[kind] ?? 0) + (entry.CapacityUnits ?? 0);
    for (const [name, index] of Object.entries({
      ...entry.GlobalSecondaryIndexes,
      ...entry.LocalSecondaryIndexes,
    })) {
      tally.indexes[name] = (tally.indexes[name] ?? 0) + (index.CapacityUnits ?? 0);
    }
  }
}

/** A proxy in front of DynamoDB (Local) that asks every read and write what it consumed, and sums it. */
export function dynamoCountingProxy(target: string): Promise<CountingProxy<DynamoTally>> {
  const tally: DynamoTally = { writes: emptyUnits(), reads: emptyUnits(), conditionFailures: 0 };
  return jsonProxy(
    target,
    tally,
    (action, body) => {
      if (writeActions.test(action) || readActions.test(action)) body.ReturnConsumedCapacity = 'INDEXES';
    },
    ({ action, request, status, answer }) => {
      const write = writeActions.test(action);
      if (!write && !readActions.test(action)) return;
      if (status >= 300) {
        const type = String(answer().__type ?? '');
        if (write && /ConditionalCheckFailed|TransactionCanceled/.test(type)) tally.conditionFailures += 1;
        return;
      }
      addConsumed(write ? tally.writes : tally.reads, itemKind(request ?? {}), answer().ConsumedCapacity);
    },
  );
}

/** A proxy in front of an SQS endpoint that counts the functions' requests and the messages they send. */
export function sqsCountingProxy(target: string): Promise<CountingProxy<SqsTally>> {
  const tally: SqsTally = { sendRequests: 0, messagesSent: 0, byAction: {} };
  return jsonProxy(
    target,
    tally,
    () => undefined,
    ({ action, status, answer }) => {
      tally.byAction[action] = (tally.byAction[action] ?? 0) + 1;
      if (status >= 300) return;
      if (action === 'SendMessage') {
        tally.sendRequests += 1;
        tally.messagesSent += 1;
      } else if (action === 'SendMessageBatch') {
        tally.sendRequests += 1;
        tally.messagesSent += ((answer().Successful as unknown[] | undefined) ?? []).length;
      }
    },
  );
}

/** What a set of jobs cost on the deployment, summed (the bench divides by the jobs). */
export interface CostCounts {
  jobs: number;
  /** Messages the step worker received. */
  messagesReceived: number;
  /** Messages the functions sent (counted at the SQS endpoint). */
  messagesSent: number;
  /** SQS requests of the functions (sends and others). */
  sqsRequests: number;
  writeUnits: number;
  indexWriteUnits: number;
  conditionFailures: number;
  readUnits: number;
  workerRuns: number;
  sweeperRuns: number;
  /** Milliseconds the step worker's and sweeper's invocations took on this machine. */
  workerMs: number;
  sweeperMs: number;
  upstreamCalls: number;
}

/** The deployed functions' memory, in MB (from the synthesized stage). */
export interface FunctionMemory {
  workerMb: number;
  sweeperMb: number;
}

/** Lambda GB-seconds of the counted invocations. */
export function gbSeconds(counts: CostCounts, memory: FunctionMemory): number {
  return (counts.workerMs * memory.workerMb + counts.sweeperMs * memory.sweeperMb) / 1024 / 1000;
}

/**
 * Dollars at list prices (scripts/cost-idle.ts, `PRICES`): Lambda requests and arm64 GB-s, SQS
 * requests (the functions' own, plus a receive and a batch delete per worker invocation), DynamoDB
 * on-demand write units (condition failures at one each) and read units.
 */
export function dollars(counts: CostCounts, memory: FunctionMemory): number {
  const lambda =
    ((counts.workerRuns + counts.sweeperRuns) * PRICES.lambdaRequestMillion) / 1e6 +
    gbSeconds(counts, memory) * PRICES.lambdaArmGbSecond;
  const sqs = ((counts.sqsRequests + 2 * counts.workerRuns) * PRICES.sqsRequestMillion) / 1e6;
  const dynamo =
    ((counts.writeUnits + counts.conditionFailures) * PRICES.dynamoWriteMillion) / 1e6 +
    (counts.readUnits * PRICES.dynamoReadMillion) / 1e6;
  return lambda + sqs + dynamo;
}
