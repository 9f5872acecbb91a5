import { describe, expect, it } from 'vitest';
import {
  billedUnitsOf,
  correlationIdOf,
  errorFromAnswer,
  headerValue,
  parseEnvelopeText,
  parseEnvelopeValue,
  parseRetryAfter,
} from '../../../shared/openplatform';

describe('parseEnvelopeText', () => {
  it('reads a success envelope', () => {
    const parsed = parseEnvelopeText('{"data":{"task_id":"t1"},"status":true,"error_code":0}');
    expect(parsed).toEqual({
      ok: true,
      envelope: { data: { task_id: 't1' }, status: true, errorCode: 0, errorMessage: undefined },
    });
  });

  it.each([
    ['"false"', '"67200002"', false, 67200002],
    ['"true"', '"0"', true, 0],
    ['false', '67200002', false, 67200002],
    ['"FALSE"', '68300008', false, 68300008],
  ])(
    'accepts status %s and error_code %s in their string encodings',
    (status, code, wantStatus, wantCode) => {
      const parsed = parseEnvelopeText(
        `{"data":null,"status":${status},"error_code":${code},"error_msg":"x"}`,
      );
      expect(parsed.ok && parsed.envelope).toMatchObject({
        status: wantStatus,
        errorCode: wantCode,
        errorMessage: 'x',
      });
    },
  );

  it('derives status from error_code when status is missing', () => {
    const parsed = parseEnvelopeText('{"error_code":"67200002","error_msg":"qps"}');
    expect(parsed.ok && parsed.envelope).toMatchObject({ status: false, errorCode: 67200002 });
  });

  it('treats a missing error_code as 0', () => {
    const parsed = parseEnvelopeText('{"status":true,"data":{}}');
    expect(parsed.ok && parsed.envelope.errorCode).toBe(0);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['{"data":{"task_id":"t', 'not valid JSON'],
    ['<html>bad gateway</html>', 'not valid JSON'],
    ['[1,2]', 'not an answer envelope'],
    ['{"data":{}}', 'status'],
    ['{"status":"maybe","error_code":0}', 'status'],
    ['{"status":true,"error_code":"zero"}', 'error_code'],
  ])('refuses %j, saying why (%s)', (text, why) => {
    const parsed = parseEnvelopeText(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain(why);
  });

  it('parses an already decoded value the same way', () => {
    expect(parseEnvelopeValue({ status: 'true', error_code: '0', data: 1 })).toMatchObject({
      ok: true,
      envelope: { status: true, data: 1 },
    });
  });
});

describe('response headers', () => {
  it('reads the correlation id and the billed units case-insensitively', () => {
    const headers = { 'X-Correlation-Id': 'abc-123', 'x-openapi-amount': ' 3 ' };
    expect(correlationIdOf(headers)).toBe('abc-123');
    expect(billedUnitsOf(headers)).toBe(3);
    expect(headerValue({ a: ['1', '2'] }, 'A')).toBe('1');
  });

  it.each([
    [{}, 0],
    [{ 'x-openapi-amount': '' }, 0],
    [{ 'x-openapi-amount': 'lots' }, 0],
    [{ 'x-openapi-amount': '-2' }, 0],
    [{ 'x-openapi-amount': '2.5' }, 2.5],
    [{ 'x-openapi-amount': ['4', '5'] }, 4],
  ])('billed units of %j are %d', (headers, units) => {
    expect(billedUnitsOf(headers)).toBe(units);
  });

  it('has no correlation id when the header is absent or blank', () => {
    expect(correlationIdOf({})).toBeUndefined();
    expect(correlationIdOf({ 'x-correlation-id': ' ' })).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it.each([
    ['5', 5000],
    ['0', 0],
    ['1.5', 1500],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
  ])('reads %j as %d ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it.each([undefined, '', 'soon', '-3'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('errorFromAnswer', () => {
  it('maps a status-false envelope in a 200 by its code, keeping everything a caller needs', () => {
    const error = errorFromAnswer({
      operationId: 'ai33-1Step1V3',
      httpStatus: 200,
      envelope: { data: null, status: false, errorCode: 67200002, errorMessage: 'qps limit' },
      correlationId: 'c-9',
      retryAfterMs: 2000,
    });
    expect(error).toMatchObject({
      kind: 'throttled',
      retryable: true,
      operationId: 'ai33-1Step1V3',
      httpStatus: 200,
      code: 67200002,
      correlationId: 'c-9',
      retryAfterMs: 2000,
    });
    expect(error.message).toContain('qps limit');
    expect(error.message).toContain('c-9');
  });

  it('maps a non-2xx answer without envelope by its status and says what the body was', () => {
    const error = errorFromAnswer({
      operationId: 'x',
      httpStatus: 502,
      bodyProblem: 'the answer had no body',
    });
    expect(error.kind).toBe('server');
    expect(error.code).toBeUndefined();
    expect(error.message).toContain('the answer had no body');
  });
});
