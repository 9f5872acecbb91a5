/**
 * The request pipeline of the sandbox: admin endpoints, download links, and for every catalogue
 * operation: route → key → group → QPS → quota → faults → body validation → handler → answer,
 * each call written to the ledger.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import { catalogue, type OperationEntry, type OperationId } from '../openplatform/catalogue';
import { loadShapeTables, operationSchemasFrom } from '../openplatform/operation-schemas';
import type { OperationRow } from '../openplatform/operation-types';
import { allOperations } from '../openplatform/operations';
import { requestSchemas } from '../openplatform/schemas/requests';
import { billedUnitsByOperation, defaultTaskDuration, defaultTaskDurations, PlatformCode } from './constants';
import { DownloadLinks } from './download-links';
import { DriftCounter, driftFileFor } from './drift';
import { streamFrames, writeEventStream } from './event-stream';
import { FaultController, type FaultDecision } from './fault-controller';
import type { FaultRule } from './fault-rules';
import {
  type BodyDamage,
  errorEnvelope,
  okEnvelope,
  resetConnection,
  writeGatewayError,
  writeJson,
} from './http-answers';
import { KeyGate, type KeyState } from './key-gate';
import { Ledger, type LedgerEntry, type StartedWork } from './ledger';
import type {
  OperationContext,
  OperationHandler,
  OperationHandlers,
  OperationOutcome,
} from './operations/contract';
import { type StreamVariant, streamVariants } from './operations/contract';
import { type GenericRequest, genericAnswer } from './operations/generic';
import { createOperationHandlers } from './operations/operation-handlers';
import type { ResolvedOptions } from './options';
import { drain, readBody } from './request-body';
import { type AdminParts, answerAdmin } from './sandbox-admin';
import { type DownloadParts, serveDownload } from './sandbox-downloads';
import { invalidParameter, SandboxRejection } from './sandbox-rejection';
import { SandboxState, type SandboxStateReport } from './sandbox-state';
import { hashText, SeededRandom, stableJson } from './seeded';
import type { Stage } from './stages';
import { TaskTimes } from './task-times';

export const STREAM_VARIANT_HEADER = 'x-sandbox-stream-variant';

type Draft = Omit<LedgerEntry, 'seq'>;

/** One operation call as its stages share it: the request, its ledger draft, how to end it. */
interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  now: number;
  draft: Draft;
  /** Record the call in the ledger (and the log) with these final fields. */
  done(patch: Partial<Draft>): void;
  /** Answer a refusal and record it. */
  reject(rejection: SandboxRejection, damage?: BodyDamage, patch?: Partial<Draft>): void;
}

export class SandboxServer {
  readonly ledger = new Ledger();
  readonly faults: FaultController;
  private readonly gate: KeyGate;
  private readonly links: DownloadLinks;
  private readonly state: SandboxState;
  private readonly handlers: OperationHandlers;
  private readonly routes = new Map<string, OperationRow>();
  /** Operations whose path has `{parameters}`: matched by pattern after the exact routes. */
  private readonly templated: { method: string; pattern: RegExp; names: string[]; row: OperationRow }[] = [];
  /** Correlation ids: apart from resource ids, so answering a poll changes nothing durable. */
  private readonly correlationIds: SeededRandom;
  private readonly closing = new AbortController();
  /** What starting on the state file found; undefined without one. */
  readonly stateReport: SandboxStateReport | undefined;
  /** The port the state file's earlier sandbox listened on, if any. */
  readonly previousPort: number | undefined;
  /** Set once listening; links are built from it. */
  baseUrl = '';

  /** Draws each task's duration (and counts running tasks for a slowdown under load). */
  private readonly taskTimes: TaskTimes;

  /** Moves answers between runs when a drift seed is given. */
  private readonly drift: DriftCounter | undefined;

  /** Takes the state file and loads it when there is one (throws when another sandbox holds it). */
  constructor(private readonly options: ResolvedOptions) {
    this.faults = new FaultController(options.faults, options.seed);
    this.gate = new KeyGate(options.keys);
    this.taskTimes = new TaskTimes(options.seed);
    this.links = new DownloadLinks({
      ttlMs: options.linkTtlMs,
      now: options.now,
      baseUrl: () => this.baseUrl,
    });
    this.state = new SandboxState({
      seed: options.seed,
      idSalt: options.idSalt,
      now: options.now,
      links: this.links,
      gate: this.gate,
      stateFile: options.stateFile,
    });
    this.handlers = createOperationHandlers((name, field, schema) =>
      this.state.registry(name, field, schema),
    );
    const opened = this.state.open();
    if (options.drift !== undefined) {
      this.drift = new DriftCounter(
        options.drift,
        options.stateFile === undefined ? undefined : driftFileFor(resolve(options.stateFile)),
      );
    }
    this.stateReport = opened?.report;
    this.previousPort = opened?.previousPort;
    this.correlationIds = SeededRandom.from(options.seed, 'correlation', options.idSalt, this.state.starts);
    for (const row of allOperations()) {
      const names = [...row.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
      if (names.length === 0) {
        this.routes.set(`${row.method} ${row.path}`, row);
        continue;
      }
      const source = row.path
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('([^/]+)');
      this.templated.push({ method: row.method, pattern: new RegExp(`^${source}$`), names, row });
    }
  }

  /** @internal The sandbox listens on `port` (the state file notes it). */
  listening(port: number): void {
    this.state.listening(port);
  }

  /** @internal Stop at once: injected latencies still pending end, and their requests get no answer. */
  shutdown(): void {
    this.closing.abort();
  }

  /** @internal Give the state file up; call once no request is being handled. */
  release(): void {
    this.state.close();
  }

  /** Wait an injected latency (wall clock); false when the sandbox closed meanwhile. */
  private async delay(ms: number): Promise<boolean> {
    if (this.closing.signal.aborted) return false;
    if (ms <= 0) return true;
    try {
      await sleep(ms, undefined, { signal: this.closing.signal });
      return true;
    } catch {
      return false;
    }
  }

  /** Answer one HTTP request. Never throws. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const correlationId = this.correlationIds.uuid();
    res.setHeader('x-correlation-id', correlationId);
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    try {
      if (url.pathname === '/__sandbox' || url.pathname.startsWith('/__sandbox/'))
        await answerAdmin(this.adminParts(), req, res, url);
      else if (url.pathname.startsWith('/files/'))
        await serveDownload(this.downloadParts(), req, res, url, correlationId);
      else await this.operation(req, res, url, correlationId);
    } catch (error) {
      this.options.logger?.(
        `sandbox internal error on ${req.method} ${url.pathname}: ${(error as Error).stack ?? error}`,
      );
      try {
        this.state.commit();
      } catch {
        // Tried again with the next request.
      }
      if (!res.headersSent) writeJson(res, 500, errorEnvelope(500, 'sandbox internal error'));
      else res.destroy();
    }
  }

  // --- operations ---

  /**
   * One call of a catalogue operation, as stages: admit (route, key, group, QPS, quota, body), the
   * faults that answer instead of the platform, the work (validation, handler), the answer.
   */
  private async operation(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    correlationId: string,
  ): Promise<void> {
    const now = this.options.now();
    const started = performance.now();
    const routed = this.route(req.method ?? 'GET', url.pathname);
    const draft: Draft = {
      time: now,
      operationId: routed?.row.operationId ?? 'unknown',
      method: req.method ?? 'GET',
      path: url.pathname,
      httpStatus: 0,
      errorCode: 0,
      outcome: 'ok',
      billedUnits: 0,
      correlationId,
      created: false,
    };
    const done = (patch: Partial<Draft>) => {
      const entry = this.ledger.record({ ...draft, ...patch });
      this.log(entry, performance.now() - started);
    };
    const reject = (rejection: SandboxRejection, damage?: BodyDamage, patch: Partial<Draft> = {}) => {
      this.state.commit();
      writeJson(
        res,
        rejection.httpStatus,
        errorEnvelope(rejection.code, rejection.message),
        rejection.headers,
        damage,
      );
      done({ httpStatus: rejection.httpStatus, errorCode: rejection.code, outcome: 'rejected', ...patch });
    };
    const call: Call = { req, res, url, now, draft, done, reject };

    if (!routed) {
      await drain(req);
      reject(
        new SandboxRejection(404, PlatformCode.notFound, `path not found: ${req.method} ${url.pathname}`),
      );
      return;
    }
    const admitted = await this.admit(call, routed.row);
    if (!admitted) return;
    const decision = this.faults.decide({ operationId: routed.row.operationId, stream: routed.row.stream });
    if (!(await this.delay(decision.latencyMs))) {
      this.state.commit();
      return;
    }
    if (this.faultBeforeWork(res, decision, done)) return;
    const outcome = await this.work(call, routed, admitted, decision);
    if (!outcome) return;
    await this.answer(call, routed.row, outcome, decision);
  }

  /** Route found: the key, its group, QPS and quota, then the body. Undefined when refused (answered). */
  private async admit(
    call: Call,
    operation: OperationRow,
  ): Promise<{ key: KeyState; raw: string } | undefined> {
    const { req, url, now, draft } = call;
    try {
      const key = this.gate.identify(req.headers.authorization, url.searchParams.get('apikey'));
      draft.keyFingerprint = key.fingerprint;
      this.gate.checkGroup(key, { group: operation.group, ref: operation.shortId ?? operation.operationId });
      this.gate.admit(key, now);
      this.gate.charge(key);
      return { key, raw: await readBody(req) };
    } catch (error) {
      if (!(error instanceof SandboxRejection)) {
        // The caller went away before its request arrived whole: a call, not a sandbox failure.
        if (!req.destroyed) throw error;
        this.state.commit();
        call.done({ outcome: 'abandoned' });
        return undefined;
      }
      await drain(req);
      call.reject(error);
      return undefined;
    }
  }

  /** Validate the request and run its handler. Undefined when refused (answered, faults included). */
  private async work(
    call: Call,
    routed: { row: OperationRow; pathValues: Record<string, string> },
    admitted: { key: KeyState; raw: string },
    decision: FaultDecision,
  ): Promise<OperationOutcome<OperationId> | GenericOutcome | undefined> {
    const { req, res, url, now, draft } = call;
    const operation = routed.row;
    try {
      if (!operation.workflow) {
        const input = await this.parseGenericInput(operation, req, url, admitted.raw, routed.pathValues);
        draft.bodyHash = hashText(stableJson(input));
        if (this.options.ledgerBodies) draft.body = input;
        return await this.runGeneric(operation, input);
      }
      const entry = catalogue[operation.operationId as OperationId];
      const input = this.parseInput(entry, url, admitted.raw);
      draft.bodyHash = hashText(stableJson(input));
      if (this.options.ledgerBodies) draft.body = input;
      const variant = this.variantHeader(req);
      const started: StartedWork[] = [];
      const outcome = this.run(entry, input, admitted.key.fingerprint, now, started);
      // Only work the handler kept: a refusal thrown after a stage was made started nothing.
      if (started.length > 0) draft.startedWork = started;
      if (outcome.kind === 'stream')
        outcome.plan.defaultVariant = variant ?? decision.streamVariant ?? outcome.plan.defaultVariant;
      return outcome;
    } catch (error) {
      if (!(error instanceof SandboxRejection)) throw error;
      this.state.commit();
      const fault = afterWorkFault(decision, false);
      if (fault?.kind === 'reset') {
        resetConnection(res);
        call.done({ errorCode: error.code, outcome: 'fault', fault: 'reset' });
      } else if (fault?.kind === 'truncated' || fault?.kind === 'malformed') {
        call.reject(error, fault.kind, { outcome: 'fault', fault: fault.kind });
      } else call.reject(error);
      return undefined;
    }
  }

  /** The work is done: answer it (JSON, events or a stream), spoiled by a fault decided for after the work. */
  private async answer(
    call: Call,
    operation: OperationRow,
    outcome: OperationOutcome<OperationId> | GenericOutcome,
    decision: FaultDecision,
  ): Promise<void> {
    const { res, now, done } = call;
    // A create created something, whatever happens to the answer now. It is on disk (with a state
    // file) before any answer goes out.
    this.state.commit();
    const created = operation.effect === 'create';
    const resource = {
      workDone: true as const,
      ...(outcome.resourceId ? { resourceId: outcome.resourceId } : {}),
    };
    const fault = afterWorkFault(decision, outcome.kind === 'stream' || outcome.kind === 'events');
    const faultPatch = fault ? { outcome: 'fault' as const, fault: fault.kind } : {};
    if (fault?.kind === 'reset') {
      resetConnection(res);
      done({ created, ...resource, ...faultPatch });
      return;
    }
    if (outcome.kind === 'json' || outcome.kind === 'answer') {
      const units = billedUnitsByOperation[operation.operationId as OperationId] ?? 1;
      const damage = fault?.kind === 'truncated' || fault?.kind === 'malformed' ? fault.kind : undefined;
      const body = outcome.kind === 'json' ? okEnvelope(outcome.data) : outcome.body;
      writeJson(res, 200, body, { 'x-openapi-amount': String(units) }, damage);
      done({ httpStatus: 200, billedUnits: units, created, ...resource, ...faultPatch });
      return;
    }
    if (outcome.kind === 'events') {
      res.writeHead(200, {
        'content-type': 'text/event-stream;charset=UTF-8',
        'cache-control': 'no-cache',
        'x-openapi-amount': '1',
      });
      done({ httpStatus: 200, billedUnits: 1, created, workDone: true, ...faultPatch });
      const frames = outcome.events.map((event) => `data: ${JSON.stringify(okEnvelope(event))}\n\n`);
      if (fault) {
        // A stream spoiled after its first frame: the reader must notice the missing end.
        res.write(frames[0] ?? '', () => res.socket?.destroy());
        return;
      }
      res.end(frames.join(''));
      return;
    }

    // A stream: the answer's length is known up front, so its cost is too.
    const plan = outcome.plan;
    const units = 1 + Math.floor((plan.tokens.input + plan.tokens.output) / 1000);
    res.writeHead(200, {
      'content-type': 'text/event-stream;charset=UTF-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-openapi-amount': String(units),
    });
    done({ httpStatus: 200, billedUnits: units, created, ...resource, ...faultPatch });
    const { frames, content } = streamFrames(plan, plan.defaultVariant, Math.floor(now / 1000));
    const streamFault = fault ? { kind: fault.kind, afterChunks: fault.afterChunks ?? 2 } : undefined;
    await writeEventStream(res, frames, content, {
      chunkDelayMs: this.options.streamChunkDelayMs,
      ...(streamFault ? { fault: streamFault } : {}),
    });
  }

  /** Faults that answer instead of the platform (nothing is done upstream). True when one did. */
  private faultBeforeWork(
    res: ServerResponse,
    decision: FaultDecision,
    done: (patch: Partial<Draft>) => void,
  ): boolean {
    const fault = decision.outcome;
    if (!fault) return false;
    // The call counted against the key's quota, whatever the fault answers.
    this.state.commit();
    switch (fault.kind) {
      case 'throttle-429': {
        const headers = { 'retry-after': String(fault.retryAfterSeconds ?? 1) };
        writeJson(
          res,
          429,
          errorEnvelope(PlatformCode.throttled, 'Too Many Requests (sandbox fault)'),
          headers,
        );
        done({ httpStatus: 429, errorCode: PlatformCode.throttled, outcome: 'fault', fault: fault.kind });
        return true;
      }
      case 'throttle-200':
        writeJson(
          res,
          200,
          errorEnvelope(PlatformCode.throttled, 'calls exceed the QPS limit (sandbox fault)'),
        );
        done({ httpStatus: 200, errorCode: PlatformCode.throttled, outcome: 'fault', fault: fault.kind });
        return true;
      case 'busy':
        writeJson(
          res,
          200,
          errorEnvelope(PlatformCode.busy, 'service error, please try again later (sandbox fault)'),
        );
        done({ httpStatus: 200, errorCode: PlatformCode.busy, outcome: 'fault', fault: fault.kind });
        return true;
      case 'http-5xx': {
        const status = fault.httpStatus ?? 503;
        writeGatewayError(res, status);
        done({ httpStatus: status, outcome: 'fault', fault: fault.kind });
        return true;
      }
      case 'reset':
        if (fault.when === 'after') return false;
        resetConnection(res);
        done({ outcome: 'fault', fault: fault.kind });
        return true;
      default:
        return false;
    }
  }

  private parseInput(operation: OperationEntry, url: URL, raw: string): unknown {
    let input: unknown;
    if (operation.method === 'GET') {
      const query = Object.fromEntries([...url.searchParams].filter(([name]) => name !== 'apikey'));
      input = query;
    } else {
      try {
        input = raw.trim() === '' ? {} : JSON.parse(raw);
      } catch (error) {
        throw invalidParameter(`the body is not valid JSON (${errorMessage(error)})`);
      }
    }
    return input;
  }

  /** The operation a request is for, with the values of its path's `{parameters}`. */
  private route(method: string, pathname: string) {
    const exact = this.routes.get(`${method} ${pathname}`);
    if (exact) return { row: exact, pathValues: {} as Record<string, string> };
    for (const candidate of this.templated) {
      if (candidate.method !== method) continue;
      const match = candidate.pattern.exec(pathname);
      if (!match) continue;
      const pathValues: Record<string, string> = {};
      candidate.names.forEach((name, index) => {
        pathValues[name] = decodeURIComponent(match[index + 1] ?? '');
      });
      return { row: candidate.row, pathValues };
    }
    return undefined;
  }

  /** A catalogue operation's parameters (query, path, headers) and body, as the client sends them. */
  private async parseGenericInput(
    row: OperationRow,
    req: IncomingMessage,
    url: URL,
    raw: string,
    pathValues: Record<string, string>,
  ): Promise<GenericRequest> {
    const parameters: Record<string, unknown> = {};
    for (const declared of row.parameters) {
      if (declared.in === 'path') parameters[declared.name] = pathValues[declared.name];
      else if (declared.in === 'header') {
        const value = req.headers[declared.name.toLowerCase()];
        if (value !== undefined) parameters[declared.name] = Array.isArray(value) ? value[0] : value;
      }
    }
    for (const [name, value] of url.searchParams) {
      if (name === 'apikey') continue;
      const previous = parameters[name];
      parameters[name] =
        previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
    }
    if (row.bodyEncoding === 'none') return { parameters, body: undefined };
    if (row.bodyEncoding === 'multipart') {
      const contentType = String(req.headers['content-type'] ?? '');
      if (!contentType.startsWith('multipart/form-data')) {
        throw invalidParameter(
          `${row.operationId} takes multipart/form-data, not "${contentType || 'nothing'}"`,
        );
      }
      let form: FormData;
      try {
        form = await new Response(Buffer.from(raw, 'latin1'), {
          headers: { 'content-type': contentType },
        }).formData();
      } catch (error) {
        throw invalidParameter(`the multipart body is not readable (${errorMessage(error)})`);
      }
      const body: Record<string, unknown> = {};
      for (const [name, value] of form) body[name] = typeof value === 'string' ? value : value.name;
      return { parameters, body };
    }
    try {
      const body: unknown = raw.trim() === '' ? {} : JSON.parse(raw);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw invalidParameter('the body must be a JSON object');
      }
      return { parameters, body: body as Record<string, unknown> };
    } catch (error) {
      if (error instanceof SandboxRejection) throw error;
      throw invalidParameter(`the body is not valid JSON (${errorMessage(error)})`);
    }
  }

  /** Check a catalogue operation's request against its schemas and generate its answer. */
  private async runGeneric(row: OperationRow, input: GenericRequest): Promise<GenericOutcome> {
    const tables = await loadShapeTables();
    const schemas = operationSchemasFrom(tables, row);
    const parameters = schemas.parameters.safeParse(input.parameters);
    if (!parameters.success) throw invalidParameter(`invalid parameter: ${formatIssues(parameters.error)}`);
    if (schemas.body) {
      const body = schemas.body.safeParse(input.body ?? {});
      if (!body.success) throw invalidParameter(`invalid parameter: ${formatIssues(body.error)}`);
    }
    const shapes = tables.operationShapes[row.operationId];
    if (!shapes) throw new Error(`no shapes for ${row.operationId}`);
    const request = { parameters: parameters.data, body: input.body };
    const data = genericAnswer(this.options.seed, row, request, tables.definitions, shapes.data);
    if (row.stream) {
      // A pipeline's events: working, then the finished result.
      const last = data as Record<string, unknown>;
      const working = { ...last, status: 'PROCESSING', content: undefined };
      return { kind: 'events', events: [working, { ...last, status: 'FINISH' }] };
    }
    if (row.answer === 'envelope') return { kind: 'answer', body: okEnvelope(data) };
    if (row.answer === 'flat')
      return { kind: 'answer', body: { ...(data as object), status: true, error_code: 0 } };
    return { kind: 'answer', body: data };
  }

  private variantHeader(req: IncomingMessage): StreamVariant | undefined {
    const value = req.headers[STREAM_VARIANT_HEADER];
    if (value === undefined) return undefined;
    const text = Array.isArray(value) ? value[0] : value;
    if (!streamVariants.includes(text as StreamVariant)) {
      throw invalidParameter(`${STREAM_VARIANT_HEADER}: must be one of ${streamVariants.join(', ')}`);
    }
    return text as StreamVariant;
  }

  /** Validate the input with the operation's request schema and call its handler. */
  private run(
    operation: OperationEntry,
    input: unknown,
    owner: string,
    now: number,
    started: StartedWork[],
  ): OperationOutcome<OperationId> {
    const id = operation.operationId as OperationId;
    const parsed = requestSchemas[id].safeParse(input);
    if (!parsed.success) throw invalidParameter(`invalid parameter: ${formatIssues(parsed.error)}`);
    const handler = this.handlers[id] as OperationHandler<OperationId>;
    return handler(parsed.data as never, this.context(owner, now, started));
  }

  /** `started` collects the work the handler starts (for the call's ledger entry). */
  private context(owner: string, now: number, started: StartedWork[]): OperationContext {
    return {
      now,
      owner,
      seed: this.options.seed,
      drift: (subject) => this.drift?.next(subject),
      newId: (shape = 'hex') => this.state.newId(shape),
      startStage: (startedBy, salt, fails): Stage => {
        const stage = { startedBy, startedAt: now, durationMs: this.durationOf(startedBy, salt, now), fails };
        started.push({ startedBy, durationMs: stage.durationMs, salt });
        return stage;
      },
      publish: (documentKey, document) => this.links.publish(documentKey, document),
    };
  }

  /** `taskDurations[op]`, else `defaultTaskDuration`, else the built-in default; drawn seeded (task-times.ts). */
  private durationOf(operationId: OperationId, salt: string, now: number): number {
    const duration =
      this.options.taskDurations[operationId] ??
      this.options.defaultTaskDuration ??
      defaultTaskDurations[operationId] ??
      defaultTaskDuration;
    return this.taskTimes.draw(duration, operationId, salt, now);
  }

  private adminParts(): AdminParts {
    return { ledger: this.ledger, faults: this.faults, baseUrl: this.baseUrl, now: () => this.options.now() };
  }

  private downloadParts(): DownloadParts {
    return {
      ledger: this.ledger,
      faults: this.faults,
      links: this.links,
      now: () => this.options.now(),
      delay: (ms) => this.delay(ms),
      log: (entry, ms) => this.log(entry, ms),
    };
  }

  private log(entry: LedgerEntry, ms: number): void {
    const logger = this.options.logger;
    if (!logger) return;
    const key = entry.keyFingerprint ? ` key=${entry.keyFingerprint}` : '';
    const fault = entry.fault ? ` fault=${entry.fault}` : '';
    logger(
      `${entry.method} ${entry.path} ${entry.operationId}${key} -> ${entry.httpStatus || (entry.outcome === 'abandoned' ? 'abandoned' : 'reset')} code=${entry.errorCode}${fault} ${ms.toFixed(0)}ms id=${entry.correlationId}`,
    );
  }
}

/** A catalogue operation's answer: the whole body as sent, or the events of a stream. */
type GenericOutcome =
  | { kind: 'answer'; body: unknown; resourceId?: undefined }
  | { kind: 'events'; events: unknown[]; resourceId?: undefined };

type AfterWorkFault = Extract<
  FaultRule,
  { kind: 'reset' | 'truncated' | 'malformed' | 'stall-stream' | 'early-end-stream' }
>;

/** The decided fault that spoils an answer after the work was done, if it applies to this answer. */
function afterWorkFault(decision: FaultDecision, streaming: boolean): AfterWorkFault | undefined {
  const fault = decision.outcome;
  if (!fault) return undefined;
  switch (fault.kind) {
    case 'reset':
      return fault.when === 'after' ? fault : undefined;
    case 'truncated':
    case 'malformed':
      return fault;
    case 'stall-stream':
    case 'early-end-stream':
      return streaming ? fault : undefined;
    default:
      return undefined;
  }
}
