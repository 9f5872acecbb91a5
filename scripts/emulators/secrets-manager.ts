/**
 * The project's Secrets Manager stand-in (tests and `npm run aws-local`): a real HTTP server on 127.0.0.1 speaking the AWS
 * JSON 1.1 protocol (`X-Amz-Target: secretsmanager.<Action>`) for CreateSecret, GetSecretValue,
 * PutSecretValue, DeleteSecret and ListSecrets (its `name` filter: names starting with a value), enough for the AWS SDK and Powertools' SecretsProvider.
 * It counts GetSecretValue calls per secret so tests can prove caching. Credentials are not checked.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';
import { formatIssues } from '../../shared/errors/zod-issues';

interface SecretVersion {
  id: string;
  text?: string | undefined;
  binary?: string | undefined;
  createdAt: number;
  stages: Set<string>;
}

interface Secret {
  name: string;
  arn: string;
  createdAt: number;
  versions: SecretVersion[];
}

export interface SecretsManagerEmulator {
  /** `http://127.0.0.1:<port>`: the SDK's `endpoint`. */
  endpoint: string;
  /** Create or replace a secret's current value directly (no HTTP). */
  setSecret(name: string, value: string): void;
  /** GetSecretValue requests received for `name` so far. */
  reads(name: string): number;
  stop(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const createSchema = z.object({
  Name: z.string().min(1).max(512),
  SecretString: z.string().optional(),
  SecretBinary: z.string().optional(),
  ClientRequestToken: z.string().optional(),
  Description: z.string().optional(),
});
const getSchema = z.object({
  SecretId: z.string().min(1),
  VersionId: z.string().optional(),
  VersionStage: z.string().optional(),
});
const listSchema = z.object({
  Filters: z.array(z.object({ Key: z.string(), Values: z.array(z.string()) })).optional(),
});
const putSchema = z.object({
  SecretId: z.string().min(1),
  SecretString: z.string().optional(),
  SecretBinary: z.string().optional(),
  ClientRequestToken: z.string().optional(),
});
const deleteSchema = z.object({
  SecretId: z.string().min(1),
  ForceDeleteWithoutRecovery: z.boolean().optional(),
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError('InvalidParameterException', formatIssues(parsed.error));
  return parsed.data;
}

/** Start the emulator on a free port of 127.0.0.1. */
export async function startSecretsManagerEmulator(
  options: { region?: string } = {},
): Promise<SecretsManagerEmulator> {
  const region = options.region ?? 'us-east-1';
  const secrets = new Map<string, Secret>();
  const readCounts = new Map<string, number>();

  const find = (id: string): Secret => {
    const secret = secrets.get(id) ?? [...secrets.values()].find((candidate) => candidate.arn === id);
    if (!secret)
      throw new ApiError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  };

  const addVersion = (
    secret: Secret,
    value: { text?: string | undefined; binary?: string | undefined },
    id?: string,
  ) => {
    if (value.text === undefined && value.binary === undefined) {
      throw new ApiError('InvalidRequestException', 'You must provide either SecretString or SecretBinary.');
    }
    const existing = id ? secret.versions.find((version) => version.id === id) : undefined;
    if (existing) return existing;
    for (const version of secret.versions) {
      version.stages.delete('AWSPREVIOUS');
      if (version.stages.delete('AWSCURRENT')) version.stages.add('AWSPREVIOUS');
    }
    const version: SecretVersion = {
      id: id ?? randomUUID(),
      text: value.text,
      binary: value.binary,
      createdAt: Date.now() / 1000,
      stages: new Set(['AWSCURRENT']),
    };
    secret.versions.push(version);
    return version;
  };

  const createSecret = (
    name: string,
    value: { text?: string | undefined; binary?: string | undefined },
    id?: string,
  ) => {
    if (secrets.has(name))
      throw new ApiError('ResourceExistsException', `The secret ${name} already exists.`);
    const secret: Secret = {
      name,
      arn: `arn:aws:secretsmanager:${region}:000000000000:secret:${name}-${randomUUID().slice(0, 6)}`,
      createdAt: Date.now() / 1000,
      versions: [],
    };
    const version =
      value.text !== undefined || value.binary !== undefined ? addVersion(secret, value, id) : undefined;
    secrets.set(name, secret);
    return { ARN: secret.arn, Name: secret.name, ...(version ? { VersionId: version.id } : {}) };
  };

  const actions: Record<string, (body: unknown) => unknown> = {
    CreateSecret(body) {
      const request = parse(createSchema, body);
      return createSecret(
        request.Name,
        { text: request.SecretString, binary: request.SecretBinary },
        request.ClientRequestToken,
      );
    },
    ListSecrets(body) {
      const request = parse(listSchema, body);
      const prefixes = (request.Filters ?? []).filter((f) => f.Key === 'name').flatMap((f) => f.Values);
      const listed = [...secrets.values()].filter(
        (secret) => prefixes.length === 0 || prefixes.some((prefix) => secret.name.startsWith(prefix)),
      );
      return { SecretList: listed.map((secret) => ({ ARN: secret.arn, Name: secret.name })) };
    },
    GetSecretValue(body) {
      const request = parse(getSchema, body);
      const secret = find(request.SecretId);
      readCounts.set(secret.name, (readCounts.get(secret.name) ?? 0) + 1);
      const stage = request.VersionStage ?? (request.VersionId ? undefined : 'AWSCURRENT');
      const version = secret.versions.find(
        (candidate) =>
          (request.VersionId === undefined || candidate.id === request.VersionId) &&
          (stage === undefined || candidate.stages.has(stage)),
      );
      if (!version) {
        throw new ApiError(
          'ResourceNotFoundException',
          "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
        );
      }
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.id,
        ...(version.text !== undefined ? { SecretString: version.text } : { SecretBinary: version.binary }),
        VersionStages: [...version.stages],
        CreatedDate: version.createdAt,
      };
    },
    PutSecretValue(body) {
      const request = parse(putSchema, body);
      const secret = find(request.SecretId);
      const version = addVersion(
        secret,
        { text: request.SecretString, binary: request.SecretBinary },
        request.ClientRequestToken,
      );
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.id,
        VersionStages: [...version.stages],
      };
    },
    DeleteSecret(body) {
      const request = parse(deleteSchema, body);
      const secret = find(request.SecretId);
      secrets.delete(secret.name);
      return { ARN: secret.arn, Name: secret.name, DeletionDate: Date.now() / 1000 };
    },
  };

  const answer = (response: ServerResponse, status: number, body: unknown, errorType?: string) => {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': randomUUID(),
      ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
    });
    response.end(text);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      const target = String(request.headers['x-amz-target'] ?? '');
      const action = target.startsWith('secretsmanager.')
        ? actions[target.slice('secretsmanager.'.length)]
        : undefined;
      if (request.method !== 'POST' || !action) {
        throw new ApiError('UnknownOperationException', `unsupported operation ${JSON.stringify(target)}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        throw new ApiError('SerializationException', 'request body is not JSON');
      }
      answer(response, 200, action(body));
    } catch (error) {
      const apiError =
        error instanceof ApiError ? error : new ApiError('InternalServiceError', String(error), 500);
      answer(response, apiError.status, { __type: apiError.type, message: apiError.message }, apiError.type);
    }
  };

  const server = createServer((request, response) => void handle(request, response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    setSecret(name, value) {
      const secret = secrets.get(name);
      if (secret) addVersion(secret, { text: value });
      else createSecret(name, { text: value });
    },
    reads: (name) => readCounts.get(name) ?? 0,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
