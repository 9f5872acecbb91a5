/**
 * Factories for what the Lambda runtime hands a handler: the context (with a real-time deadline,
 * since Date is faked in these tests) and the events of SQS, API Gateway (HTTP API, payload 2.0)
 * and EventBridge schedules.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context, SQSRecord } from 'aws-lambda';

/** A context whose deadline is `timeoutMs` of real time from now. */
export function lambdaContext(functionName: string, timeoutMs = 60_000): Context {
  const deadline = performance.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `2026/01/05/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function sqsRecord(
  message: { messageId: string; receiptHandle: string; body: string; receiveCount: number; sentAt: number },
  queueArn: string,
): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

export function scheduledEvent(): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:000000000000:rule/opflow-sweeper'],
    detail: {},
  };
}

/** An HTTP API (payload 2.0) event, as API Gateway builds it for a Lambda proxy integration. */
export function httpApiEvent(request: {
  method: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
  body: string | undefined;
  jwtClaims?: Record<string, string> | undefined;
}): APIGatewayProxyEventV2 {
  const query = new URLSearchParams(request.rawQuery);
  const queryStringParameters: Record<string, string> = {};
  for (const [name, value] of query) {
    queryStringParameters[name] = queryStringParameters[name]
      ? `${queryStringParameters[name]},${value}`
      : value;
  }
  const now = Date.now();
  // As API Gateway does: the Cookie header becomes the `cookies` field, one entry a cookie.
  const { cookie, ...headers } = request.headers;
  const cookies = cookie ? cookie.split(/;\s*/).filter(Boolean) : [];
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: request.path,
    rawQueryString: request.rawQuery,
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(request.rawQuery ? { queryStringParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'opflowapi',
      domainName: 'opflowapi.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'opflowapi',
      http: {
        method: request.method,
        path: request.path,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: request.headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
      ...(request.jwtClaims ? { authorizer: { jwt: { claims: request.jwtClaims, scopes: [] } } } : {}),
    },
    ...(request.body !== undefined && request.body !== ''
      ? { body: Buffer.from(request.body).toString('base64'), isBase64Encoded: true }
      : { isBase64Encoded: false }),
  } as APIGatewayProxyEventV2;
}
