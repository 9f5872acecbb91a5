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
export { FaultController, type FaultDecision } from './FaultController';
export { type FaultKind, type FaultRule, faultRuleSchema } from './faultRules';
export { keyFingerprint } from './KeyGate';
export {
  type CallOutcome,
  type DuplicateCreateGroup,
  Ledger,
  type LedgerEntry,
  type LedgerFilter,
} from './Ledger';
export { type StreamVariant, streamVariants } from './operations/contract';
export { patentCountFor } from './operations/patentCount';
export type { SandboxKey, SandboxOptions } from './options';
export { STREAM_VARIANT_HEADER } from './SandboxServer';
export {
  describeStateReport,
  type SandboxStateReport,
  STATE_FILE_FORMAT,
  STATE_FILE_VERSION,
} from './SandboxState';
export { discardStateFile, StateFileInUseError } from './StateFile';
export { type Sandbox, startSandbox } from './startSandbox';
