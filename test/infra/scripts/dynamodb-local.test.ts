/**
 * DynamoDB Local on a port of its own choosing (scripts/emulators/dynamodb-local.ts). The port is
 * free when chosen and bound by the JVM a second later; another server (fauxqs, in a test file
 * beside this one) can take it in between. The start must not take that server for DynamoDB: it
 * starts the JVM again on another port, and on a port it was given it fails and says which.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DynamoDbLocal,
  findFreePort,
  startDynamoDbLocal,
} from '../../../scripts/emulators/dynamodb-local';
import { createAwsClients, destroyAwsClients } from '../../../shared/backends/aws';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';

/** A server that answers every request as fauxqs answers a DynamoDB one. */
async function notDynamoDb(): Promise<Server & { port: number }> {
  const server = createServer((_request, response) => {
    response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
    response.end(JSON.stringify({ __type: 'InvalidAction', message: 'Unknown action' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('DynamoDB Local on a free port', () => {
  it(
    'a port taken between its choice and the bind: starts again on another, where DynamoDB answers',
    async () => {
      const taken = await notDynamoDb();
      cleanup.push(() => new Promise((resolve) => taken.close(() => resolve())));
      const chosen: number[] = [];
      const emulator: DynamoDbLocal = await startDynamoDbLocal({
        choosePort: async () => {
          const port = chosen.length === 0 ? taken.port : await findFreePort();
          chosen.push(port);
          return port;
        },
      });
      cleanup.push(() => emulator.stop());
      expect(chosen[0]).toBe(taken.port);
      expect(chosen).toHaveLength(2);
      expect(emulator.port).toBe(chosen[1]);
      const clients = createAwsClients({
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        endpoints: { dynamodb: emulator.endpoint },
      });
      cleanup.push(async () => destroyAwsClients(clients));
      const tables = await clients.dynamoDb.send(new ListTablesCommand({}));
      expect(tables.TableNames).toEqual([]);
    },
    REAL_PROCESS_TIMEOUT_MS * 2,
  );

  it(
    'on a port it was given that another server holds: fails, naming the port',
    async () => {
      const taken = await notDynamoDb();
      cleanup.push(() => new Promise((resolve) => taken.close(() => resolve())));
      await expect(startDynamoDbLocal({ port: taken.port })).rejects.toThrow(
        `DynamoDB Local did not start on port ${taken.port}: the port is taken`,
      );
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});
