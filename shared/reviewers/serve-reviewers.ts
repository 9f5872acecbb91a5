/**
 * The reviewers on `opflow serve`: the confirmation page (`/review/{token}`, a public mount: the
 * signed token is its credential) and the pass that sends notices and takes timeout defaults,
 * every `checkEverySeconds`. The link key is read up front, so a server whose config has rules
 * but no key stops at start, naming the variable.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { CallbackUrlPolicy } from '../callbacks/ssrf-guard';
import type { JobDeps } from '../engine/deps';
import { openConfirmations } from '../engine/review-record';
import { errorMessage } from '../errors/error-message';
import type { ServerMount } from '../http/node-server';
import { answerReviewPage, reviewPathPattern } from './confirmation-page';
import type { ReviewersConfig } from './review-config';
import { reviewPass } from './review-pass';
import { approvalsOf } from './review-rules';
import type { ReviewerSecrets } from './reviewer-secrets';

/** The largest form body read (the options and a name). */
const maxFormBytes = 64 * 1024;

function readForm(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= maxFormBytes) chunks.push(chunk);
    });
    req.once('end', () => resolve(size > maxFormBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/** The confirmation page as a mount of the node server. */
export function reviewMount(deps: JobDeps, key: Buffer): ServerMount {
  return {
    public: true,
    matches: (path) => reviewPathPattern.test(path),
    async handle(req, res, { path, method }) {
      const token = reviewPathPattern.exec(path)![1]!;
      const body = method === 'POST' ? await readForm(req) : undefined;
      const answer =
        method === 'POST' && body === undefined
          ? { status: 413, headers: { 'content-type': 'text/plain' }, body: 'the form is too large' }
          : await answerReviewPage(deps, key, {
              method,
              token,
              body,
              cookie: req.headers.cookie,
              secure:
                (req.socket as TLSSocket).encrypted === true || req.headers['x-forwarded-proto'] === 'https',
            });
      res.writeHead(answer.status, answer.headers);
      res.end(method === 'HEAD' ? undefined : answer.body);
    },
  };
}

export interface ServedReviewers {
  mount: ServerMount;
  /** Starts the pass once the server's public URL is known. */
  start(publicUrl: string): void;
  stop(): Promise<void>;
}

/** The reviewers of a served config; undefined when it has no rule. */
export async function prepareReviewers(options: {
  deps: JobDeps;
  config: ReviewersConfig | undefined;
  secrets: ReviewerSecrets;
  policy?: CallbackUrlPolicy | undefined;
}): Promise<ServedReviewers | undefined> {
  const { deps, config } = options;
  if (!config || config.rules.length === 0) return undefined;
  const key = await options.secrets.linkKey();
  // A second approver is asked for from the moment a job waits, not only once the pass has run.
  deps.reviewApprovals = approvalsOf(config);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let tick: (() => void) | undefined;
  let again = false;
  // A first approval (by link, API, MCP or dashboard) calls for the second approver at once, not
  // at the next pass: a pass runs now (or right after the one under way).
  const told = deps.onJobChange;
  deps.onJobChange = (job) => {
    told?.(job);
    if (tick && openConfirmations(job).some((answer) => answer.version === job.version)) tick();
  };
  return {
    mount: reviewMount(deps, key),
    start(publicUrl) {
      tick = () => {
        if (running) {
          again = true; // the pass under way may have read the job before the change
          return;
        }
        again = false;
        running = reviewPass({
          ...deps,
          config,
          secrets: options.secrets,
          publicUrl,
          policy: options.policy,
        })
          .catch((error: unknown) =>
            deps.log?.error('reviewers: the pass failed; it runs again', { error: errorMessage(error) }),
          )
          .finally(() => {
            running = undefined;
            if (again && timer) tick?.();
          });
      };
      tick();
      timer = setInterval(tick, config.checkEverySeconds * 1000);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      tick = undefined;
      await running;
    },
  };
}
