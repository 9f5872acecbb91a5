/**
 * The sandbox's admin endpoints under `/__sandbox`: health, the call ledger, and the fault rules.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../errors/error-message';
import { allOperations } from '../openplatform/operations';
import type { FaultController } from './fault-controller';
import type { FaultRule } from './fault-rules';
import { writeJson } from './http-answers';
import type { Ledger } from './ledger';
import { drain, readBody } from './request-body';

/** What the admin endpoints need of the sandbox. */
export interface AdminParts {
  readonly ledger: Ledger;
  readonly faults: FaultController;
  readonly baseUrl: string;
  now(): number;
}

/** Answer one `/__sandbox/...` admin request: health, the ledger, fault rules. */
export async function answerAdmin(
  sandbox: AdminParts,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const route = `${req.method} ${url.pathname.replace(/\/+$/, '')}`;
  const answer = (status: number, body: unknown) => writeJson(res, status, body);
  switch (route) {
    case 'GET /__sandbox/health':
      await drain(req);
      answer(200, {
        status: 'ok',
        url: sandbox.baseUrl,
        operations: allOperations().length,
        now: sandbox.now(),
      });
      return;
    case 'GET /__sandbox/ledger': {
      await drain(req);
      const since = Number(url.searchParams.get('since') ?? 0);
      answer(200, {
        summary: sandbox.ledger.summary(),
        duplicateCreateGroups: sandbox.ledger.duplicateCreateGroups(),
        entries: sandbox.ledger.entries().filter((entry) => entry.seq > since),
      });
      return;
    }
    case 'DELETE /__sandbox/ledger':
      await drain(req);
      sandbox.ledger.clear();
      answer(200, { summary: sandbox.ledger.summary() });
      return;
    case 'GET /__sandbox/faults':
      await drain(req);
      answer(200, { rules: sandbox.faults.rules() });
      return;
    case 'POST /__sandbox/faults':
    case 'PUT /__sandbox/faults': {
      let body: unknown;
      try {
        body = JSON.parse((await readBody(req)) || 'null');
      } catch {
        answer(400, { error: 'the body is not valid JSON' });
        return;
      }
      const wrapped = body !== null && typeof body === 'object' && !Array.isArray(body) && 'rules' in body;
      const rules = (
        wrapped ? (body as { rules: unknown }).rules : Array.isArray(body) ? body : [body]
      ) as FaultRule[];
      const replace = route.startsWith('PUT') || url.searchParams.get('replace') === 'true';
      try {
        if (replace) sandbox.faults.set(rules);
        else {
          const current = sandbox.faults.rules();
          sandbox.faults.set([...current, ...rules]);
        }
      } catch (error) {
        answer(400, { error: errorMessage(error) });
        return;
      }
      answer(200, { rules: sandbox.faults.rules() });
      return;
    }
    case 'DELETE /__sandbox/faults':
      await drain(req);
      sandbox.faults.clear();
      answer(200, { rules: [] });
      return;
    default:
      await drain(req);
      answer(404, {
        error: `no admin endpoint ${route}`,
        endpoints: [
          'GET /__sandbox/health',
          'GET|DELETE /__sandbox/ledger',
          'GET|POST|PUT|DELETE /__sandbox/faults',
        ],
      });
  }
}
