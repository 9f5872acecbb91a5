/**
 * Receivers that judge what the reviewers' notices send them, as the real services would, for the
 * e2e tests of the Teams and generic webhook channels:
 *
 * - a Teams-shaped incoming webhook: takes a JSON `message` with one Adaptive Card attachment (its
 *   schema, type and version, text blocks, an `Action.OpenUrl` with an http(s) URL) and answers 202
 *   as a Teams Workflows webhook does; anything else gets 400, so a malformed card fails delivery;
 * - a generic webhook that verifies the Standard Webhooks signature with its secret (and the
 *   timestamp's tolerance) before it takes a notice: 204, or 401 for a body it cannot verify, so a
 *   delivery counts as sent only when its signature holds.
 *
 * Both listen on 127.0.0.1 on a free port, keep what they took, and count what they refused.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** An Adaptive Card as the Teams receiver took it. */
export interface TeamsCard {
  path: string;
  /** The texts of the card's text blocks, in order (the first is the title). */
  texts: string[];
  /** The option facts: option id -> line. */
  facts: Record<string, string>;
  /** The Open URL action's URL (the confirmation page's link). */
  url: string;
  body: string;
}

/** A generic webhook notice whose signature verified. */
export interface VerifiedNotice {
  path: string;
  id: string;
  payload: {
    type: string;
    round: number;
    job: { id: string; workflow: string; tenant: string; label?: string };
    options: { id: string; preselected?: boolean }[];
    approvals: number;
    firstApproval?: { by?: string; options: string[] };
    link: { url: string; expiresAt: string };
    timeout?: { at: string; answer: string };
  };
}

export interface Receiver<T> {
  host: string;
  /** What was taken. */
  taken: T[];
  /** What was refused, with why. */
  refused: { path: string; why: string }[];
  close(): Promise<void>;
}

type Judge<T> = (
  req: IncomingMessage,
  body: string,
) => { ok: true; item: T; status: number } | { ok: false; why: string; status: number };

async function startReceiver<T>(judge: Judge<T>): Promise<Receiver<T>> {
  const taken: T[] = [];
  const refused: { path: string; why: string }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const verdict =
        req.method === 'POST'
          ? judge(req, Buffer.concat(chunks).toString('utf8'))
          : { ok: false as const, why: `method ${req.method}`, status: 405 };
      if (verdict.ok) taken.push(verdict.item);
      else refused.push({ path: req.url ?? '', why: verdict.why });
      res.writeHead(verdict.status, { 'content-type': 'text/plain' }).end(verdict.ok ? '' : verdict.why);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    taken,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Why a Teams webhook body is not one Adaptive Card message, or the card read from it. */
export function readTeamsCard(path: string, body: string): TeamsCard | string {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  if (!isRecord(message) || message.type !== 'message') return 'not a message';
  const attachments = message.attachments;
  if (!Array.isArray(attachments) || attachments.length !== 1) return 'not one attachment';
  const attachment = attachments[0] as unknown;
  if (!isRecord(attachment) || attachment.contentType !== 'application/vnd.microsoft.card.adaptive')
    return 'the attachment is not an Adaptive Card';
  const card = attachment.content;
  if (!isRecord(card) || card.type !== 'AdaptiveCard') return 'no AdaptiveCard content';
  if (card.$schema !== 'http://adaptivecards.io/schemas/adaptive-card.json') return 'no card schema';
  if (typeof card.version !== 'string' || !/^1\.[0-6]$/.test(card.version))
    return 'a card version Teams does not render';
  if (!Array.isArray(card.body) || card.body.length === 0) return 'an empty card';
  const texts: string[] = [];
  const facts: Record<string, string> = {};
  for (const element of card.body as unknown[]) {
    if (!isRecord(element)) return 'a body element that is not an object';
    if (element.type === 'TextBlock') {
      if (typeof element.text !== 'string' || element.text === '') return 'a TextBlock without text';
      texts.push(element.text);
    } else if (element.type === 'FactSet') {
      if (!Array.isArray(element.facts)) return 'a FactSet without facts';
      for (const fact of element.facts as unknown[]) {
        if (!isRecord(fact) || typeof fact.title !== 'string' || typeof fact.value !== 'string')
          return 'a fact without title or value';
        facts[fact.title] = fact.value;
      }
    } else return `an element Teams would not expect here: ${String(element.type)}`;
  }
  const actions = card.actions;
  const action = Array.isArray(actions) ? (actions[0] as unknown) : undefined;
  if (!isRecord(action) || action.type !== 'Action.OpenUrl' || typeof action.url !== 'string')
    return 'no Action.OpenUrl';
  if (!/^https?:\/\//.test(action.url)) return 'the action URL is not http(s)';
  return { path, texts, facts, url: action.url, body };
}

/** A Teams-shaped incoming webhook (202 for one Adaptive Card message, 400 otherwise). */
export function startTeamsReceiver(): Promise<Receiver<TeamsCard>> {
  return startReceiver((req, body) => {
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return { ok: false, why: 'not application/json', status: 400 };
    const card = readTeamsCard(req.url ?? '', body);
    return typeof card === 'string'
      ? { ok: false, why: card, status: 400 }
      : { ok: true, item: card, status: 202 };
  });
}

const header = (headers: IncomingHttpHeaders, name: string) => String(headers[name] ?? '');

/** A generic webhook that takes only notices whose Standard Webhooks signature verifies with `secret`. */
export function startSignedReceiver(secret: string): Promise<Receiver<VerifiedNotice>> {
  const webhook = new Webhook(secret);
  return startReceiver((req, body) => {
    const id = header(req.headers, 'webhook-id');
    try {
      const payload = webhook.verify(body, {
        'webhook-id': id,
        'webhook-timestamp': header(req.headers, 'webhook-timestamp'),
        'webhook-signature': header(req.headers, 'webhook-signature'),
      }) as VerifiedNotice['payload'];
      return { ok: true, item: { path: req.url ?? '', id, payload }, status: 204 };
    } catch (error) {
      return { ok: false, why: `signature: ${(error as Error).message}`, status: 401 };
    }
  });
}
