/**
 * Where the reviewers' notices land in the tests: one helper for every channel. Each receiver listens
 * on 127.0.0.1 on a free port, keeps what it took (`taken`) and says what it refused and why
 * (`refused`), so a test reads every channel the same way:
 *
 * - `startHookReceiver`: keeps every POST as it came (path, headers, body) and answers 200, or what
 *   the test's `answer` says (a Slack channel, a failing endpoint, one that echoes a secret back);
 * - `startTeamsReceiver`: a Teams-shaped incoming webhook that takes a JSON `message` with one
 *   Adaptive Card attachment (its schema, type and version, text blocks, an `Action.OpenUrl` with an
 *   http(s) URL) and answers 202 as a Teams Workflows webhook does; anything else gets 400, so a
 *   malformed card fails delivery;
 * - `startSignedReceiver`: a generic webhook that verifies the Standard Webhooks signature with its
 *   secret (and the timestamp's tolerance) before it takes a notice: 204, or 401 for a body it cannot
 *   verify, so a delivery counts as sent only when its signature holds;
 * - `startMailCatcher`: a real SMTP server that takes mail only from the user `mailer` (password
 *   `smtpPassword`) and parses each message; `url` carries the credentials it accepts.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';

/** An Adaptive Card as the Teams receiver took it. */
export interface TeamsCard {
  path: string;
  /** The texts of the card's text blocks, in order (the first is the title). */
  texts: string[];
  /** The option facts: option id -> line. */
  facts: Record<string, string>;
  /** The Open URL action's URL (the confirmation page's link); '' on a card without action. */
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
    options: { id: string; label: string; preselected?: boolean }[];
    approvals: number;
    firstApproval?: { by?: string; options: string[] };
    link: { url: string; expiresAt: string };
    /** `answer`: the default in words, each option by its label; `options`: its ids. */
    timeout?: { at: string; answer: string; options?: string[] };
  };
}

/** A running receiver: `host` is `127.0.0.1:<port>` (for channel URLs and the callback allow-list). */
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
) => { ok: true; item: T; status: number; text?: string } | { ok: false; why: string; status: number };

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
      res
        .writeHead(verdict.status, { 'content-type': 'text/plain' })
        .end(verdict.ok ? (verdict.text ?? '') : verdict.why);
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
  // A card that asks nothing (the notice of a default taken) has no action.
  if (actions === undefined) return { path, texts, facts, url: '', body };
  const action = Array.isArray(actions) ? (actions[0] as unknown) : undefined;
  if (!isRecord(action) || action.type !== 'Action.OpenUrl' || typeof action.url !== 'string')
    return 'no Action.OpenUrl';
  if (!/^https?:\/\//.test(action.url)) return 'the action URL is not http(s)';
  return { path, texts, facts, url: action.url, body };
}

/** A POST the hook receiver kept. */
export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type HookReceiver = Receiver<ReceivedPost>;

/**
 * Keeps every POST and answers `answer`'s status and text for it: 200 and no text by default (a
 * Slack channel); a test of failed deliveries answers 500, or echoes the request's URL and body back.
 */
export function startHookReceiver(
  answer: (post: ReceivedPost) => [status: number, text: string] = () => [200, ''],
): Promise<HookReceiver> {
  return startReceiver((req, body) => {
    const post = { path: req.url ?? '', headers: req.headers, body };
    const [status, text] = answer(post);
    return { ok: true, item: post, status, text };
  });
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

/** A mail as the catcher parsed it: its first recipient, subject, text and HTML ('' without). */
export interface CaughtMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** The SMTP catcher's password, for tests that check it never shows in a log. */
export const smtpPassword = 'smtp-pass-word';

/** A running SMTP catcher: `url` carries the credentials it accepts; `refused` names failed sign-ins. */
export interface MailCatcher extends Receiver<CaughtMail> {
  url: string;
}

/** A real SMTP server (no TLS) that takes mail signed in as `mailer` with `smtpPassword`, or without sign-in. */
export async function startMailCatcher(): Promise<MailCatcher> {
  const taken: CaughtMail[] = [];
  const refused: { path: string; why: string }[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onAuth: (auth, _session, callback) => {
      if (auth.username === 'mailer' && auth.password === smtpPassword)
        return callback(null, { user: 'mailer' });
      refused.push({ path: 'AUTH', why: `bad credentials for ${auth.username ?? 'nobody'}` });
      callback(new Error('bad credentials'));
    },
    onData: (stream, _session, callback) => {
      simpleParser(stream)
        .then((parsed) => {
          const to = Array.isArray(parsed.to) ? parsed.to[0]?.text : parsed.to?.text;
          taken.push({
            to: to ?? '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  return {
    host,
    url: `smtp://mailer:${smtpPassword}@${host}`,
    taken,
    refused,
    close: () => new Promise<void>((resolve) => smtp.close(resolve)),
  };
}
