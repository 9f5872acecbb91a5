/**
 * The client's public contract: what one call returns, what it costs, and the options it takes.
 * The implementation is client.ts; workflows and the engine depend only on these types.
 */
import type { OperationId } from './catalogue';
import type { OperationRow } from './operation-types';
import type { RequestOf } from './schemas/requests';
import type { DataOf } from './schemas/responses';

/** What one upstream call cost, reported for every call, successful or not. */
export interface CallUsage {
  operationId: string;
  durationMs: number;
  httpStatus?: number | undefined;
  correlationId?: string | undefined;
  /** Units billed, from the `x-openapi-amount` header (0 when absent). */
  billedUnits: number;
  ok: boolean;
  errorKind?: string | undefined;
}

export interface CallResult<Op extends OperationId> {
  data: DataOf<Op>;
  usage: CallUsage;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Use this key instead of the client's default (multi-tenant callers). */
  apiKey?: string | undefined;
  /**
   * Overall time limit for this call, in milliseconds. Default: the client's `timeoutMs` (which
   * defaults to its `bodyTimeoutMs`) for `call` and `fetchDocument`; none for `stream`, whose
   * limit is its idle timeout.
   */
  timeoutMs?: number | undefined;
}

export interface TokenUsage {
  input: number;
  output: number;
  total: number;
}

export interface StreamReference {
  type?: string | undefined;
  text?: string | undefined;
  /** A patent id, paper id or URL, depending on `type`. */
  value?: string | undefined;
  link?: string | undefined;
  [extra: string]: unknown;
}

/** The assembled answer of a streamed chat operation. */
export interface StreamResult {
  text: string;
  references: StreamReference[];
  tokens: TokenUsage;
  /** `finished`, `stop`, `length`, or an OpenAI-like `finish_reason`. */
  finishReason: string;
  /** Identifiers the stream announced (chat_id, session_id, ...). */
  ids: Record<string, string>;
  events: number;
  usage: CallUsage;
}

export interface StreamOptions extends CallOptions {
  /** Called with each piece of text as it arrives. */
  onText?: ((delta: string) => void) | undefined;
}

export interface FetchedDocument {
  body: Uint8Array;
  contentType: string;
  /** From Content-Disposition or the URL's last segment. */
  fileName: string;
  usage: CallUsage;
}

export type StreamOperationId =
  | 'ai07ChatCcGptStream'
  | 'ai50ChatPatGptStream'
  | 'ai20ChatPharmGptStream'
  | 'ai68-2ChatAiLsStream';

/** A call of any catalogue operation: its parameters (query, path, header, by name) and body. */
export interface OperationRequest {
  parameters?: Record<string, unknown> | undefined;
  body?: unknown;
}

export interface OperationCallResult {
  operation: OperationRow;
  /**
   * The answer's data, checked against the operation's schema: for a chat stream the assembled
   * answer (text, references, tokens), for another event stream the list of its events.
   */
  data: unknown;
  usage: CallUsage;
}

export interface OpenPlatformClient {
  /** One attempt at one operation: validates the body, sends it, parses the envelope. Never retries. */
  call<Op extends OperationId>(
    operationId: Op,
    body: RequestOf<Op>,
    options?: CallOptions,
  ): Promise<CallResult<Op>>;
  /**
   * `call` by an operation id or a short documentation name (`ai35-1`), for callers holding a name
   * from configuration. An unknown name is an `invalid-request` error listing close matches.
   */
  callByName(idOrRef: string, body: unknown, options?: CallOptions): Promise<CallResult<OperationId>>;
  /**
   * One attempt at any of the platform's operations, by operationId or short id: checks the
   * parameters and body against the operation's schemas (nothing is sent when they are wrong), sends
   * them where the operation takes them, parses the answer leniently. Never retries.
   */
  request(idOrRef: string, input?: OperationRequest, options?: StreamOptions): Promise<OperationCallResult>;
  /** A streamed chat operation: yields text through `onText`, resolves with the assembled answer. */
  stream(
    operationId: StreamOperationId,
    body: RequestOf<StreamOperationId>,
    options?: StreamOptions,
  ): Promise<StreamResult>;
  /** Download a document from a `download_url` / `report_url` the platform handed out. */
  fetchDocument(url: string, options?: CallOptions): Promise<FetchedDocument>;
  close(): Promise<void>;
}
