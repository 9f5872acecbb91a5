/**
 * The sandbox's download links: what `/files/<token>/<name>` answers, as the platform's object
 * storage would (expired links 403, unknown ones 404, faults as storage errors).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DownloadLinks } from './download-links';
import type { FaultController } from './fault-controller';
import { resetConnection, writeStorageError } from './http-answers';
import type { Ledger, LedgerEntry } from './ledger';
import { drain } from './request-body';

/** What serving a download needs of the sandbox. */
export interface DownloadParts {
  readonly ledger: Ledger;
  readonly faults: FaultController;
  readonly links: DownloadLinks;
  now(): number;
  /** Wait an injected latency; false when the sandbox closed meanwhile. */
  delay(ms: number): Promise<boolean>;
  log(entry: LedgerEntry, ms: number): void;
}

type Draft = Omit<LedgerEntry, 'seq'>;

/** Serve one download link (`/files/<token>/<name>`), faults applied as object storage answers them. */
export async function serveDownload(
  sandbox: DownloadParts,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  correlationId: string,
): Promise<void> {
  const now = sandbox.now();
  const started = performance.now();
  const draft: Draft = {
    time: now,
    operationId: 'download',
    method: req.method ?? 'GET',
    path: url.pathname,
    httpStatus: 0,
    errorCode: 0,
    outcome: 'ok',
    billedUnits: 0,
    correlationId,
    created: false,
  };
  const done = (patch: Partial<Draft>) =>
    sandbox.log(sandbox.ledger.record({ ...draft, ...patch }), performance.now() - started);
  await drain(req);
  const decision = sandbox.faults.decide({ operationId: 'download', stream: false });
  if (!(await sandbox.delay(decision.latencyMs))) return;
  const fault = decision.outcome;
  if (fault?.kind === 'throttle-429') {
    writeStorageError(res, 429, 'SlowDown', 'Please reduce your request rate.', {
      'retry-after': String(fault.retryAfterSeconds ?? 1),
    });
    done({ httpStatus: 429, outcome: 'fault', fault: fault.kind });
    return;
  }
  if (fault?.kind === 'http-5xx') {
    writeStorageError(res, fault.httpStatus ?? 503, 'ServiceUnavailable', 'Please try again.');
    done({ httpStatus: fault.httpStatus ?? 503, outcome: 'fault', fault: fault.kind });
    return;
  }
  if (fault?.kind === 'reset') {
    resetConnection(res);
    done({ outcome: 'fault', fault: fault.kind });
    return;
  }
  const [, , token = '', name = ''] = url.pathname.split('/');
  const opened =
    req.method === 'GET'
      ? await sandbox.links.open(token, decodeURIComponent(name))
      : { kind: 'missing' as const };
  if (opened.kind === 'expired') {
    writeStorageError(res, 403, 'AccessDenied', 'Request has expired');
    done({ httpStatus: 403, outcome: 'rejected' });
    return;
  }
  if (opened.kind === 'missing') {
    writeStorageError(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    done({ httpStatus: 404, outcome: 'rejected' });
    return;
  }
  res.writeHead(200, {
    'content-type': opened.contentType,
    'content-length': String(opened.body.length),
    'content-disposition': `attachment; filename="${opened.fileName}"`,
  });
  if (fault?.kind === 'truncated') {
    res.write(opened.body.subarray(0, Math.floor(opened.body.length / 2)), () => res.socket?.destroy());
    done({ httpStatus: 200, outcome: 'fault', fault: fault.kind });
    return;
  }
  res.end(opened.body);
  done({ httpStatus: 200 });
}
