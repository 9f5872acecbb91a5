/**
 * Where the reviewers' notices land in the e2e tests: a real SMTP server that takes mail only from
 * the user `mailer` (password `smtp-pass-word`) and parses each message, and a real HTTP receiver
 * that keeps every POST (Slack, Teams, a generic webhook). Both listen on 127.0.0.1, on a free port.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A mail as the catcher parsed it: its first recipient, subject and text. */
export interface CaughtMail {
  to: string;
  subject: string;
  text: string;
}

/** The SMTP catcher's password, for tests that check it never shows in a log. */
export const smtpPassword = 'smtp-pass-word';

/** A running SMTP catcher: `url` carries the credentials it accepts. */
export interface MailCatcher {
  url: string;
  mails: CaughtMail[];
  close(): Promise<void>;
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const mails: CaughtMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onAuth: (auth, _session, callback) =>
      auth.username === 'mailer' && auth.password === smtpPassword
        ? callback(null, { user: 'mailer' })
        : callback(new Error('bad credentials')),
    onData: (stream, _session, callback) => {
      simpleParser(stream)
        .then((parsed) => {
          const to = Array.isArray(parsed.to) ? parsed.to[0]?.text : parsed.to?.text;
          mails.push({ to: to ?? '', subject: parsed.subject ?? '', text: parsed.text ?? '' });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  return {
    url: `smtp://mailer:${smtpPassword}@127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => smtp.close(resolve)),
  };
}

/** A POST the receiver kept. */
export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A running HTTP receiver: `host` is `127.0.0.1:<port>` (for the callback allow-list and URLs). */
export interface HookReceiver {
  host: string;
  posts: ReceivedPost[];
  close(): Promise<void>;
}

/** Answers every request 200 "ok" and keeps it. */
export async function startHookReceiver(): Promise<HookReceiver> {
  const posts: ReceivedPost[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      posts.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
