/**
 * The words every output of a sandbox job carries, so simulated data is never taken for real
 * publications: a banner above a report, a field of result.json, a column of batch outputs.
 */
import { withLineUnderTitle } from './job-facts';

export const sandboxHeadline = 'Sandbox data: not real publications.';
export const sandboxDetail =
  'This job ran against opflow’s built-in sandbox, which simulates the Open Platform; set OPFLOW_API_KEY to run it against the platform.';
/** What a report of sandbox data says first. */
export const sandboxNotice = `${sandboxHeadline} ${sandboxDetail}`;

/** `markdown` with the notice as a quote right under its title (or first, without a title). */
export function withSandboxNotice(markdown: string): string {
  return withLineUnderTitle(markdown, `> **${sandboxHeadline}** ${sandboxDetail}`);
}
