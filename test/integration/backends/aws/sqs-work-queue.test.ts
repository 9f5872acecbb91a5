// SqsWorkQueue on fauxqs: message bodies, the 900-second delay cap, batches of ten, and what
// happens to batch entries SQS refuses.
import { ReceiveMessageCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import {
  delaySeconds,
  InvalidWorkMessageError,
  parseWorkMessage,
  SqsWorkQueue,
  WorkQueueSendError,
} from '../../../../shared/backends/aws';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ dynamoDb: false, secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

/** A client that records every SendMessageBatch and can make SQS refuse chosen entries. */
function recordingClient(
  refuse: (body: string, attempt: number) => { code: string; senderFault: boolean } | undefined,
) {
  const client = new SQSClient({
    region: emulators.region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    endpoint: emulators.fauxqs!.address,
  });
  const batches: number[] = [];
  const attempts = new Map<string, number>();
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as SendMessageBatchCommandInput;
      if (!input.Entries) return next(args);
      batches.push(input.Entries.length);
      const refused: { Id: string; Code: string; SenderFault: boolean; Message: string }[] = [];
      const kept = input.Entries.filter((entry) => {
        const body = entry.MessageBody ?? '';
        const attempt = (attempts.get(body) ?? 0) + 1;
        attempts.set(body, attempt);
        const refusal = refuse(body, attempt);
        if (refusal)
          refused.push({
            Id: entry.Id ?? '',
            Code: refusal.code,
            SenderFault: refusal.senderFault,
            Message: 'refused by the test',
          });
        return !refusal;
      });
      const result =
        kept.length > 0
          ? await next({ ...args, input: { ...input, Entries: kept } })
          : { output: { Successful: [], $metadata: {} }, response: {} };
      const output = result.output as { Failed?: unknown[] };
      output.Failed = [...(output.Failed ?? []), ...refused];
      return result;
    },
    { step: 'initialize', name: 'refuseEntries' },
  );
  return { client, batches };
}

async function receiveAll(queueUrl: string) {
  const bodies: string[] = [];
  for (;;) {
    const answer = await emulators.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    if (!answer.Messages?.length) return bodies;
    bodies.push(...answer.Messages.map((message) => message.Body ?? ''));
  }
}

describe('SqsWorkQueue', () => {
  it('sends exactly {jobId, version}', async () => {
    const { queueUrl } = emulators.createQueue();
    const queue = new SqsWorkQueue({ client: emulators.clients.sqs, queueUrl });
    await queue.send({ jobId: 'J1', version: 3, extra: 'dropped' } as never, 0);
    expect(await receiveAll(queueUrl)).toEqual(['{"jobId":"J1","version":3}']);
  });

  it('carries the token reserved for a job in its message, there and back', async () => {
    const { queueUrl } = emulators.createQueue();
    const queue = new SqsWorkQueue({ client: emulators.clients.sqs, queueUrl });
    expect(queue.carriesTokens).toBe(true);
    await queue.send({ jobId: 'J2', version: 4, tokenAt: 1_767_603_600_500 }, 0);
    const [body] = await receiveAll(queueUrl);
    expect(body).toBe('{"jobId":"J2","version":4,"tokenAt":1767603600500}');
    expect(parseWorkMessage(body!)).toEqual({ jobId: 'J2', version: 4, tokenAt: 1_767_603_600_500 });
  });

  it('rounds delays up to whole seconds and caps them at 900', async () => {
    expect([0, -5, 1, 999, 1000, 1001, 899_999, 900_000, 86_400_000].map(delaySeconds)).toEqual([
      0, 0, 1, 1, 1, 2, 900, 900, 900,
    ]);
    const { queueUrl, queueName } = emulators.createQueue();
    const queue = new SqsWorkQueue({ client: emulators.clients.sqs, queueUrl });
    expect(queue.maxDelayMs).toBe(900_000);
    await queue.send({ jobId: 'later', version: 1 }, 3 * 3600_000);
    await queue.send({ jobId: 'soon', version: 1 }, 1500);
    const state = emulators.fauxqs!.inspectQueue(queueName)!;
    expect(state.messages.delayed.map((message) => message.body).sort()).toEqual([
      '{"jobId":"later","version":1}',
      '{"jobId":"soon","version":1}',
    ]);
    expect(await receiveAll(queueUrl)).toEqual([]);
  });

  it('sends a batch ten messages per request', async () => {
    const { queueUrl } = emulators.createQueue();
    const { client, batches } = recordingClient(() => undefined);
    const queue = new SqsWorkQueue({ client, queueUrl });
    const messages = Array.from({ length: 23 }, (_, i) => ({
      message: { jobId: ulid(), version: i },
      delayMs: 0,
    }));
    await queue.sendBatch(messages);
    expect(batches).toEqual([10, 10, 3]);
    expect((await receiveAll(queueUrl)).length).toBe(23);
    client.destroy();
  });

  it('sends again the entries SQS failed on its side, and only those', async () => {
    const { queueUrl } = emulators.createQueue();
    const { client, batches } = recordingClient((body, attempt) =>
      body.includes('"version":2') && attempt === 1
        ? { code: 'InternalError', senderFault: false }
        : undefined,
    );
    const queue = new SqsWorkQueue({ client, queueUrl });
    await queue.sendBatch([0, 1, 2, 3].map((version) => ({ message: { jobId: 'J', version }, delayMs: 0 })));
    expect(batches).toEqual([4, 1]);
    expect((await receiveAll(queueUrl)).sort()).toEqual(
      [0, 1, 2, 3].map((version) => `{"jobId":"J","version":${version}}`),
    );
    client.destroy();
  });

  it('names the entries that still fail, after sending the rest', async () => {
    const { queueUrl } = emulators.createQueue();
    const { client } = recordingClient((body) =>
      body.includes('"version":1')
        ? { code: 'InternalError', senderFault: false }
        : body.includes('"version":4')
          ? { code: 'InvalidMessageContents', senderFault: true }
          : undefined,
    );
    const queue = new SqsWorkQueue({ client, queueUrl, batchRetries: 2 });
    const error = await queue
      .sendBatch([0, 1, 2, 3, 4].map((version) => ({ message: { jobId: 'J', version }, delayMs: 0 })))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkQueueSendError);
    expect((error as WorkQueueSendError).failed).toEqual([
      { jobId: 'J', version: 4, code: 'InvalidMessageContents' },
      { jobId: 'J', version: 1, code: 'InternalError' },
    ]);
    expect((error as Error).message).toMatch(/2 of 5 work messages were not sent: .*J@1 \(InternalError\)/);
    expect((await receiveAll(queueUrl)).length).toBe(3);
    client.destroy();
  });
});

describe('parseWorkMessage', () => {
  it('reads a valid body and drops unknown fields', () => {
    expect(parseWorkMessage('{"jobId":"J","version":0,"x":1}')).toEqual({ jobId: 'J', version: 0 });
  });

  it.each([
    ['not json', /not JSON/],
    ['[]', /jobId/],
    ['{"jobId":"","version":1}', /jobId/],
    ['{"jobId":"J","version":1.5}', /version/],
    ['{"jobId":"J","version":-1}', /version/],
    ['{"jobId":"J"}', /version/],
    ['{"jobId":"J","version":1,"tokenAt":"soon"}', /tokenAt/],
    ['{"jobId":"J","version":1,"tokenAt":-5}', /tokenAt/],
  ])('refuses %s, saying what is wrong', (body, why) => {
    expect(() => parseWorkMessage(body)).toThrow(InvalidWorkMessageError);
    expect(() => parseWorkMessage(body)).toThrow(why);
  });
});
