/**
 * The startup banner: where the sandbox listens, the key it accepts, and a curl line to try.
 * Only the well-known sandbox key is ever printed; other configured keys are counted, not shown.
 */
import { SANDBOX_API_KEY } from './constants';
import { describeStateReport, type SandboxStateReport } from './sandbox-state';

export interface BannerSubject {
  url: string;
  apiKeys: readonly string[];
  state?: SandboxStateReport | undefined;
}

export function sandboxBanner(sandbox: BannerSubject): string {
  const acceptsWellKnownKey = sandbox.apiKeys.includes(SANDBOX_API_KEY);
  const others = sandbox.apiKeys.length - (acceptsWellKnownKey ? 1 : 0);
  const key = acceptsWellKnownKey ? SANDBOX_API_KEY : '<one of your configured keys>';
  const lines = [
    `opflow sandbox (a stand-in for the Open Platform API) listening on ${sandbox.url}`,
    acceptsWellKnownKey
      ? `  API key:  ${SANDBOX_API_KEY}`
      : '  API key:  (the well-known sandbox key is not accepted)',
    ...(others > 0 ? [`  plus ${others} configured key${others === 1 ? '' : 's'} (not shown)`] : []),
    '  try:',
    `    curl -s -X POST ${sandbox.url}/search/patent/query-search-count \\`,
    `      -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\`,
    `      -d '{"query_text": "TACD:(lithium battery)"}'`,
    `  health: ${sandbox.url}/__sandbox/health   ledger: ${sandbox.url}/__sandbox/ledger`,
    ...(sandbox.state ? [`  state:  ${describeStateReport(sandbox.state)}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/** Print the banner (to stdout unless told otherwise). */
export function printSandboxBanner(
  sandbox: BannerSubject,
  write: (text: string) => void = (text) => process.stdout.write(text),
): void {
  write(sandboxBanner(sandbox));
}
