/**
 * An OpenPlatformClient whose answers a test scripts per operation, for engine unit tests that
 * must not depend on HTTP. End-to-end tests use the real client against the sandbox instead.
 */
import type { OperationId } from '../../shared/openplatform/catalogue';
import { OpenPlatformError } from '../../shared/openplatform/errors';
import type {
  CallUsage,
  FetchedDocument,
  OpenPlatformClient,
  StreamResult,
} from '../../shared/openplatform/types';

export type Script = (operationId: string, body: unknown, apiKey: string | undefined) => unknown;

export class ScriptedClient implements OpenPlatformClient {
  readonly calls: { operationId: string; body: unknown; apiKey: string | undefined }[] = [];
  constructor(public script: Script) {}

  private usage(operationId: string, ok: boolean, errorKind?: string): CallUsage {
    return {
      operationId,
      durationMs: 5,
      billedUnits: ok ? 1 : 0,
      ok,
      errorKind,
      correlationId: `corr-${this.calls.length}`,
    };
  }

  // biome-ignore lint/suspicious/noExplicitAny: scripted answers are untyped by design
  async call(operationId: OperationId, body: any, options?: { apiKey?: string }): Promise<any> {
    this.calls.push({ operationId, body, apiKey: options?.apiKey });
    const data = await this.script(operationId, body, options?.apiKey);
    return { data, usage: this.usage(operationId, true) };
  }

  // biome-ignore lint/suspicious/noExplicitAny: scripted answers are untyped by design
  async callByName(operationId: string, body: unknown): Promise<any> {
    return this.call(operationId as OperationId, body);
  }

  /** A catalogue operation: the script sees `{parameters, body}` as the body. */
  // biome-ignore lint/suspicious/noExplicitAny: scripted answers are untyped by design
  async request(idOrRef: string, input: any = {}, options?: { apiKey?: string }): Promise<any> {
    this.calls.push({ operationId: idOrRef, body: input, apiKey: options?.apiKey });
    const data = this.script(idOrRef, input, options?.apiKey);
    const { findCatalogueOperation } = await import('../../shared/openplatform/operations');
    return { operation: findCatalogueOperation(idOrRef), data, usage: this.usage(idOrRef, true) };
  }

  async stream(
    operationId: OperationId,
    body: unknown,
    options?: { apiKey?: string },
  ): Promise<StreamResult> {
    this.calls.push({ operationId, body, apiKey: options?.apiKey });
    const text = String(await this.script(operationId, body, options?.apiKey));
    return {
      text,
      references: [],
      tokens: { input: 1, output: 2, total: 3 },
      finishReason: 'finished',
      ids: {},
      events: 1,
      usage: this.usage(operationId, true),
    };
  }

  async fetchDocument(url: string): Promise<FetchedDocument> {
    this.calls.push({ operationId: 'fetch', body: url, apiKey: undefined });
    const body = await this.script('fetch', url, undefined);
    return {
      body: new TextEncoder().encode(String(body)),
      contentType: 'application/pdf',
      fileName: 'report.pdf',
      usage: this.usage('fetch', true),
    };
  }

  async close() {}
}

export const upstreamError = (kind: ConstructorParameters<typeof OpenPlatformError>[0]['kind'], extra = {}) =>
  new OpenPlatformError({ kind, message: `upstream said ${kind}`, correlationId: 'corr-err', ...extra });
