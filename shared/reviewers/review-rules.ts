/**
 * Which reviewers' rule applies to a job, and how many people must confirm its selection. Apart
 * from the config's schemas (review-config.ts), so the api function loads it only when a rule asks
 * for a second approver (a chunk of its own).
 */
import type { ReviewersConfig, ReviewRule } from './review-config';

/** What of a job a rule matches on. */
export interface JobIdentity {
  workflow: string;
  tenant: string;
  source: string;
  idempotencyKey?: string | undefined;
}

/** The first rule that matches the job, if any. Schedules and webhook sources are known by the job's key. */
export function ruleFor(config: ReviewersConfig, job: JobIdentity): ReviewRule | undefined {
  return config.rules.find((rule) => {
    const m = rule.match;
    if (m.workflow !== undefined && m.workflow !== job.workflow) return false;
    if (m.tenant !== undefined && m.tenant !== job.tenant) return false;
    if (m.source !== undefined && m.source !== job.source) return false;
    const key = job.idempotencyKey ?? '';
    if (m.schedule !== undefined && !(job.source === 'schedule' && key.startsWith(`schedule:${m.schedule}:`)))
      return false;
    if (m.webhook !== undefined && !(job.source === 'webhook' && key.startsWith(`webhook:${m.webhook}:`)))
      return false;
    return true;
  });
}

/**
 * How many people must confirm a job's selection by the config's rules (engine deps'
 * `reviewApprovals`): undefined when no rule asks for two, so nothing is wired.
 */
export function approvalsOf(config: ReviewersConfig | undefined): ((job: JobIdentity) => number) | undefined {
  if (!config?.rules.some((rule) => rule.approvers > 1)) return undefined;
  return (job) => ruleFor(config, job)?.approvers ?? 1;
}
