/**
 * The words every output of a sandbox job carries, so simulated data is never taken for real
 * publications: a banner above a report, a field of result.json, a column of batch outputs.
 */

export const sandboxHeadline = 'Sandbox data: not real publications.';
export const sandboxDetail =
  'This job ran against opflow’s built-in sandbox, which simulates the Open Platform; set OPFLOW_API_KEY to run it against the platform.';
/** What a report of sandbox data says first. */
export const sandboxNotice = `${sandboxHeadline} ${sandboxDetail}`;

/** `markdown` with the notice as a quote right under its title (or first, without a title). */
export function withSandboxNotice(markdown: string): string {
  const quote = `> **${sandboxHeadline}** ${sandboxDetail}`;
  const lines = markdown.split('\n');
  const title = lines.findIndex((text) => /^#\s/.test(text));
  if (title < 0) return `${quote}\n\n${markdown}`;
  return [...lines.slice(0, title + 1), '', quote, ...lines.slice(title + 1)].join('\n');
}
