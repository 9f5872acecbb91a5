import { describe, expect, it } from 'vitest';
import {
  errorCodeTable,
  httpStatusTable,
  isOpenPlatformError,
  kindFor,
  OpenPlatformError,
  retryableKinds,
} from '../../../shared/openplatform';

const codeRows = Object.entries(errorCodeTable).map(([code, row]) => ({ code: Number(code), ...row }));
const statusRows = Object.entries(httpStatusTable).map(([status, kind]) => ({
  status: Number(status),
  kind,
}));

describe('errorCodeTable', () => {
  it.each(codeRows)(
    'business code $code ($meaning) maps to $kind, in a 200 and in an error status',
    ({ code, kind }) => {
      expect(kindFor(200, code)).toBe(kind);
      expect(kindFor(500, code)).toBe(kind);
      expect(kindFor(undefined, code)).toBe(kind);
    },
  );

  it('covers the codes the platform documents', () => {
    for (const code of [
      67200002, 67200000, 67200001, 67200004, 67200202, 67200008, 67200101, 68300004, 68300005, 68300006,
      68300007, 68300008, 68300010,
    ]) {
      expect(errorCodeTable[code], String(code)).toBeDefined();
    }
  });

  it('makes throttling and busy retryable, quota and auth not', () => {
    expect(retryableKinds[kindFor(200, 67200002)]).toBe(true);
    expect(retryableKinds[kindFor(200, 68300008)]).toBe(true);
    expect(retryableKinds[kindFor(200, 67200001)]).toBe(false);
    expect(retryableKinds[kindFor(200, 67200000)]).toBe(false);
    expect(retryableKinds[kindFor(401, 67200202)]).toBe(false);
  });
});

describe('httpStatusTable', () => {
  it.each(statusRows)('HTTP $status without a code maps to $kind', ({ status, kind }) => {
    expect(kindFor(status, undefined)).toBe(kind);
    expect(kindFor(status, 0)).toBe(kind);
  });

  it.each([500, 502, 503, 504, 599])('unlisted HTTP %i maps to server', (status) => {
    expect(kindFor(status, undefined)).toBe('server');
  });

  it.each([402, 405, 418, 451])('unlisted HTTP %i maps to invalid-request', (status) => {
    expect(kindFor(status, undefined)).toBe('invalid-request');
  });
});

describe('kindFor precedence', () => {
  it('lets a known business code win over the HTTP status', () => {
    expect(kindFor(429, 68300008)).toBe('busy');
    expect(kindFor(403, 67200002)).toBe('throttled');
    expect(kindFor(500, 67200001)).toBe('quota-exhausted');
  });

  it('falls back to the HTTP status for an unknown code', () => {
    expect(kindFor(429, 99999999)).toBe('throttled');
    expect(kindFor(503, 12345)).toBe('server');
  });

  it('calls an unknown code in a 200 a server error, and a 200 without any code a protocol error', () => {
    expect(kindFor(200, 12345)).toBe('server');
    expect(kindFor(200, undefined)).toBe('protocol');
    expect(kindFor(200, 0)).toBe('protocol');
    expect(kindFor(undefined, undefined)).toBe('protocol');
  });
});

describe('OpenPlatformError', () => {
  it('takes retryable from its kind unless told otherwise, and keeps its cause', () => {
    const cause = new Error('socket hang up');
    const byKind = new OpenPlatformError({ kind: 'network', message: 'reset', cause });
    const overridden = new OpenPlatformError({ kind: 'network', message: 'reset', retryable: false });
    expect(byKind.retryable).toBe(true);
    expect(byKind.cause).toBe(cause);
    expect(overridden.retryable).toBe(false);
    expect(isOpenPlatformError(byKind)).toBe(true);
    expect(isOpenPlatformError(cause)).toBe(false);
  });

  it('serialises to what a job record keeps', () => {
    const error = new OpenPlatformError({
      kind: 'throttled',
      message: 'slow down',
      operationId: 'ai35-1NoveltySearchSubmit',
      httpStatus: 200,
      code: 67200002,
      correlationId: 'corr-1',
    });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'OpenPlatformError',
      kind: 'throttled',
      message: 'slow down',
      retryable: true,
      operationId: 'ai35-1NoveltySearchSubmit',
      httpStatus: 200,
      code: 67200002,
      correlationId: 'corr-1',
    });
  });
});
