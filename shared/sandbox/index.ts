/**
 * The sandbox: a real HTTP server that stands in for the Open Platform API (see README.md here).
 * This file is the only way in.
 */
export { printSandboxBanner, sandboxBanner } from './banner';
export {
  DEFAULT_LINK_TTL_MS,
  defaultTaskDuration,
  defaultTaskDurations,
  PlatformCode,
  SANDBOX_API_KEY,
  type TaskDuration,
} from './constants';
export { FaultController, type FaultDecision } from './fault-controller';
export { type FaultKind, type FaultRule, faultRuleSchema } from './fault-rules';
export { keyFingerprint } from './key-gate';
export {
  type CallOutcome,
  type DuplicateCreateGroup,
  Ledger,
  type LedgerEntry,
  type LedgerFilter,
  type StartedWork,
} from './ledger';
export { type StreamVariant, streamVariants } from './operations/contract';
export { patentCountFor } from './operations/patent-count';
export type { SandboxKey, SandboxOptions } from './options';
export { STREAM_VARIANT_HEADER } from './sandbox-server';
export {
  describeStateReport,
  type SandboxStateReport,
  STATE_FILE_FORMAT,
  STATE_FILE_VERSION,
} from './sandbox-state';
export { type Sandbox, startSandbox } from './start-sandbox';
export { discardStateFile, StateFileInUseError } from './state-file';
