// The Lambda `api` handler on real job records (the local backend's store stands in for DynamoDB,
// which the handler never touches directly): a JWT tenant claim that is present but malformed is
// refused rather than taken for an operator, a JWT without a tenant is an operator's only through the
// configured operator grant (403 otherwise), and a base64 body that is not UTF-8 is refused.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpApiEvent, lambdaContext } from '../../../../scripts/lambda/lambda-events';
import { type ApiHandler, createApiHandler, tenantOfEvent } from '../../../../shared/runtime/lambda/api';
import { createObservability } from '../../../../shared/runtime/lambda/observability';
import { contractJob } from '../../../contract/ports.contract';
import { localEngine, type TestEngine } from '../../../support/engines';

let engine: TestEngine;
let handler: ApiHandler;

beforeEach(async () => {
  engine = await localEngine();
  const { local } = engine;
  handler = createApiHandler({
    deps: engine.deps,
    observability: createObservability(),
    auth: { mode: 'jwt', operators: { claim: 'cognito:groups', groups: ['opflow-operators'] } },
  });
  await local.store.create(contractJob({ tenant: 'default' }));
  await local.store.create(contractJob({ tenant: 'acme' }));
});
afterEach(async () => {
  await engine.close();
});

function event(claims: Record<string, unknown> | undefined, extra: Partial<APIGatewayProxyEventV2> = {}) {
  const base = httpApiEvent({ method: 'GET', path: '/jobs', rawQuery: '', headers: {}, body: undefined });
  if (claims !== undefined) {
    (base.requestContext as unknown as Record<string, unknown>).authorizer = { jwt: { claims, scopes: [] } };
  }
  return { ...base, ...extra } as APIGatewayProxyEventV2;
}

async function send(e: APIGatewayProxyEventV2) {
  const result = (await handler.handle(
    e,
    lambdaContext('opflow-api', 10_000) as Context,
  )) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode, body: JSON.parse(result.body as string) as Record<string, unknown> };
}

describe('the tenant claim', () => {
  it('binds a caller with a well-formed claim to its tenant, and an IAM caller to none', async () => {
    for (const claims of [
      { tenant: 'acme' },
      { 'custom:tenant': 'acme' },
      { tenant: 'acme', 'custom:tenant': 'acme' },
    ]) {
      const { status, body } = await send(event(claims));
      expect(status, JSON.stringify(claims)).toBe(200);
      expect((body.jobs as { tenant: string }[]).map((job) => job.tenant)).toEqual(['acme']);
    }
  });

  it('takes a JWT without a tenant for an operator only through the configured group', async () => {
    // API Gateway hands a list claim to the function as one string, "[a b]".
    for (const groups of ['[opflow-operators]', '[readers opflow-operators]', ['opflow-operators']]) {
      const operator = await send(event({ sub: 'ops', 'cognito:groups': groups }));
      expect(operator.status, JSON.stringify(groups)).toBe(200);
      expect((operator.body.jobs as unknown[]).length).toBe(2);
    }
    // A token with a tenant and the group is bound to its tenant: the narrower right wins.
    const both = await send(event({ tenant: 'acme', 'cognito:groups': '[opflow-operators]' }));
    expect((both.body.jobs as { tenant: string }[]).map((job) => job.tenant)).toEqual(['acme']);
  });

  it.each([
    ['no groups', { sub: 'user-1' }],
    ['another group', { sub: 'user-1', 'cognito:groups': '[readers]' }],
    [
      'a group whose name only contains the operators group',
      { sub: 'u', 'cognito:groups': '[opflow-operators-x]' },
    ],
    ['the group in another claim', { sub: 'u', groups: '[opflow-operators]' }],
  ])('refuses a JWT with no tenant and %s (403), listing nothing', async (_name, claims) => {
    const { status, body } = await send(event(claims));
    expect(status).toBe(403);
    expect((body.error as { code: string }).code).toBe('forbidden');
    expect((body.error as { message: string }).message).toContain('no tenant claim and no operator grant');
    expect(body.jobs).toBeUndefined();
  });

  it('refuses a tokenless request when the API takes JWTs, and takes it for IAM otherwise', async () => {
    const refused = await send(event(undefined));
    expect(refused.status).toBe(403);
    expect((refused.body.error as { message: string }).message).toContain('carries no token');
    expect(tenantOfEvent(event(undefined), { mode: 'iam' })).toBeUndefined();
    expect(tenantOfEvent(event(undefined))).toBeUndefined();
  });

  it('has no operators by default: a JWT without a tenant is refused when no grant is configured', () => {
    for (const auth of [undefined, { mode: 'jwt' as const }]) {
      expect(() =>
        tenantOfEvent(event({ sub: 'ops', 'cognito:groups': '[opflow-operators]' }), auth),
      ).toThrow('no operator grant is configured (api.auth.operators)');
    }
  });

  it('reads a boolean operator claim when the grant names no groups', () => {
    const auth = { mode: 'jwt' as const, operators: { claim: 'custom:operator' } };
    expect(tenantOfEvent(event({ 'custom:operator': 'true' }), auth)).toBeUndefined();
    expect(tenantOfEvent(event({ 'custom:operator': true }), auth)).toBeUndefined();
    expect(() => tenantOfEvent(event({ 'custom:operator': 'false' }), auth)).toThrow(
      'custom:operator = true',
    );
  });

  it.each([
    ['a number', { tenant: 5 }, 'tenant claim is not a string'],
    ['zero', { tenant: 0 }, 'tenant claim is not a string'],
    ['false', { tenant: false }, 'tenant claim is not a string'],
    ['null', { tenant: null }, 'tenant claim is not a string'],
    ['a list', { tenant: ['acme'] }, 'tenant claim is not a string'],
    ['an object', { tenant: { name: 'acme' } }, 'tenant claim is not a string'],
    ['empty', { tenant: '' }, 'tenant claim must be 1 to 64'],
    ['too long', { tenant: 'a'.repeat(65) }, 'tenant claim must be 1 to 64'],
    ['with a slash', { tenant: 'acme/other' }, 'tenant claim must be 1 to 64'],
    ['a malformed custom claim', { 'custom:tenant': 7 }, 'custom:tenant claim is not a string'],
    ['two tenants', { tenant: 'acme', 'custom:tenant': 'default' }, 'names two different tenants'],
  ])('refuses a token whose tenant claim is %s (403), listing nothing', async (_name, claims, message) => {
    const { status, body } = await send(event(claims));
    expect(status).toBe(403);
    expect((body.error as { code: string }).code).toBe('forbidden');
    expect((body.error as { message: string }).message).toContain(message);
    expect(body.jobs).toBeUndefined();
  });

  it('refuses claims that are not an object', () => {
    const e = event(undefined);
    (e.requestContext as unknown as Record<string, unknown>).authorizer = { jwt: { claims: 'tenant=acme' } };
    expect(() => tenantOfEvent(e)).toThrow('the token carries no claims object');
  });
});

describe('base64 bodies', () => {
  it('refuses a body that is not UTF-8 instead of reading it with replacement characters', async () => {
    const e = event(undefined, {
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('base64'),
      isBase64Encoded: true,
    });
    e.requestContext.http.method = 'POST';
    e.headers = { 'content-type': 'application/json' };
    const { status, body } = await send(e);
    expect(status).toBe(400);
    expect(body.error).toEqual({
      status: 400,
      code: 'invalid-body',
      message: 'the request body is not UTF-8 text',
    });
    expect((await engine.local.store.list({ limit: 10 })).jobs).toHaveLength(2);
  });
});

describe('the body limit', () => {
  /** A POST /jobs of a design search whose one image, given as data, is `imageBytes` long (a PNG by its first bytes). */
  function designSearch(imageBytes: number, base64Encoded: boolean) {
    const image = Buffer.alloc(imageBytes, 7);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(image);
    const json = JSON.stringify({
      workflow: 'design-infringement-search',
      input: { images: [{ data: image.toString('base64'), name: 'front.png' }] },
    });
    const e = event(
      { tenant: 'acme' },
      base64Encoded ? { body: Buffer.from(json).toString('base64'), isBase64Encoded: true } : { body: json },
    );
    e.requestContext.http.method = 'POST';
    e.rawPath = '/jobs';
    e.headers = { 'content-type': 'application/json' };
    return e;
  }

  it.each([false, true])(
    'refuses an image too large to come as data with the limit and what to do instead (base64-encoded event: %s)',
    async (base64Encoded) => {
      const { status, body } = await send(designSearch(900 * 1024, base64Encoded));
      expect(status).toBe(413);
      const error = body.error as { code: string; message: string };
      expect(error.code).toBe('body-too-large');
      expect(error.message).toContain("over 1 MiB (1048576 bytes), this API's limit");
      expect(error.message).toContain('one over about 760 KB does not fit');
      expect(error.message).toContain('design-infringement-search or design-infringement-1v1');
      expect(error.message).toContain('{"url": "https://..."}');
      expect(error.message).toContain('opflow --backend aws ingest');
      expect((await engine.local.store.list({ limit: 10 })).jobs).toHaveLength(2);
    },
  );

  it('takes an image just under the size the refusal names', async () => {
    const { status, body } = await send(designSearch(750 * 1024, false));
    expect(status, JSON.stringify(body)).toBe(201);
    expect((body.job as { workflow: string }).workflow).toBe('design-infringement-search');
  });
});
