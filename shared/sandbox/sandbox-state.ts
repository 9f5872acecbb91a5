/**
 * What a sandbox must remember for a caller to go on with work it already holds an id for, and
 * keeping it in a state file (option `stateFile`) across restarts: every task registry (inputs,
 * stages with their start times and durations, confirmations, generated content), the download
 * links and what their documents are made from, the position of the id generator (new ids never
 * repeat old ones), and the call counts of keys with a quota.
 *
 * Not kept: the ledger, fault rules, QPS windows and rendered document bytes.
 *
 * After each request the registries report which records the request changed; only then is the
 * file rewritten, atomically, before the answer goes out (see StateFile). Unchanged records are not
 * serialised again, but the whole file is written each time, so its size is the cost of a write.
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { errorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import type { DownloadLinks } from './download-links';
import type { KeyGate } from './key-gate';
import { SeededRandom } from './seeded';
import { StateFile } from './state-file';
import { TaskRegistry } from './task-registry';

export const STATE_FILE_FORMAT = 'opflow-sandbox-state';
export const STATE_FILE_VERSION = 1;

/** What starting on a state file found. */
export interface SandboxStateReport {
  /** The state file (absolute path). */
  file: string;
  /**
   * `new`: there was no file yet; `restored`: the sandbox continues the file's state; `moved-aside`:
   * the file could not be used (see `problem`), was renamed to `movedTo`, and the sandbox starts empty.
   */
  outcome: 'new' | 'restored' | 'moved-aside';
  /** Tasks, jobs, reports and chats restored. */
  records: number;
  problem?: string;
  movedTo?: string;
}

/** One line saying what starting on the state file found, for a person. */
export function describeStateReport(report: SandboxStateReport): string {
  switch (report.outcome) {
    case 'new':
      return `keeping its state in ${report.file} (a new file)`;
    case 'restored':
      return `continuing ${report.records} task${report.records === 1 ? '' : 's'} from ${report.file}`;
    case 'moved-aside':
      return `could not use the state file ${report.file}: ${report.problem}; moved it to ${report.movedTo} and started empty`;
  }
}

const envelopeSchema = z.looseObject({ format: z.literal(STATE_FILE_FORMAT), version: z.number() });

const fileSchema = z.strictObject({
  format: z.literal(STATE_FILE_FORMAT),
  version: z.literal(STATE_FILE_VERSION),
  savedAt: z.number(),
  seed: z.number().int(),
  starts: z.number().int().positive(),
  port: z.number().int().min(0).max(65535),
  ids: z.number().int().min(0).max(0xffff_ffff),
  quotaUsed: z.record(z.string().regex(/^[0-9a-f]{16}$/), z.number().int().nonnegative()),
  links: z.unknown(),
  registries: z.record(z.string(), z.record(z.string().min(1), z.unknown())),
});

export interface SandboxStateOptions {
  seed: number;
  /** Mixed into the first id generator; empty when the seed was given. */
  idSalt: string;
  now: () => number;
  links: DownloadLinks;
  gate: KeyGate;
  /** Where to keep the state; nothing is kept when omitted. */
  stateFile?: string | undefined;
}

export class SandboxState {
  private readonly registries = new Map<string, TaskRegistry<{ readonly owner: string }>>();
  private readonly file: StateFile | undefined;
  private ids: SeededRandom;
  private idsMoved = false;
  private quotaText = '{}';
  private unsaved = false;
  private port = 0;
  /** How many sandboxes started on this file, this one included (0 without a file). */
  private startCount = 0;

  constructor(private readonly options: SandboxStateOptions) {
    this.ids = options.idSalt
      ? SeededRandom.from(options.seed, 'ids', options.idSalt)
      : SeededRandom.from(options.seed, 'ids');
    this.file = options.stateFile === undefined ? undefined : new StateFile(options.stateFile);
  }

  /** How many sandboxes started on this state file, this one included; 0 without one. */
  get starts(): number {
    return this.startCount;
  }

  /**
   * A registry for one kind of record, kept in the state file under `name`. Register every registry
   * before `open()`.
   */
  registry<T extends { readonly owner: string }>(
    name: string,
    field: string,
    schema: z.ZodType<T>,
  ): TaskRegistry<T> {
    if (this.registries.has(name)) throw new Error(`two sandbox registries named "${name}"`);
    const registry = new TaskRegistry<T>(name, field, schema, this.file !== undefined);
    this.registries.set(name, registry as unknown as TaskRegistry<{ readonly owner: string }>);
    return registry;
  }

  /** A fresh identifier, never one handed out before (by this sandbox or an earlier one on the file). */
  newId(shape: 'uuid' | 'hex'): string {
    this.idsMoved = true;
    return shape === 'uuid' ? this.ids.uuid() : this.ids.hex(32);
  }

  /**
   * Take the state file and load it. Returns undefined without a state file, and the port the file's
   * sandbox listened on in `previousPort`. Throws when another live sandbox holds the file, or when
   * the file was written with another seed; a file that is not valid is moved aside (see the report).
   */
  open(): { report: SandboxStateReport; previousPort?: number } | undefined {
    const file = this.file;
    if (!file) return undefined;
    file.lock();
    try {
      const text = file.read();
      if (text === undefined) {
        this.startCount = 1;
        return { report: { file: file.path, outcome: 'new', records: 0 } };
      }
      let problem: string;
      try {
        const stored = this.parse(text);
        if (stored.seed !== this.options.seed) {
          throw new Error(
            `the sandbox state file ${file.path} was written by a sandbox with seed ${stored.seed}, not ${this.options.seed}: start with seed ${stored.seed}, or use another file`,
          );
        }
        const records = this.restore(stored);
        this.startCount = stored.starts + 1;
        return {
          report: { file: file.path, outcome: 'restored', records },
          previousPort: stored.port,
        };
      } catch (error) {
        if (!(error instanceof UnusableStateError)) throw error;
        problem = error.message;
      }
      this.restoreEmpty();
      const movedTo = file.moveAside();
      // Callers may still hold ids from the unusable file: a seeded sequence would hand them out
      // again for other tasks, so start somewhere else.
      this.ids = SeededRandom.from(this.options.seed, 'ids', randomBytes(8).toString('hex'));
      this.startCount = 1;
      return { report: { file: file.path, outcome: 'moved-aside', records: 0, problem, movedTo } };
    } catch (error) {
      file.unlock();
      throw error;
    }
  }

  /** The sandbox listens on `port`: write it down with the rest (links name it). */
  listening(port: number): void {
    this.port = port;
    if (this.file) this.write();
  }

  /**
   * Write the state file if this request changed anything durable; returns once it is on disk.
   * Call before answering, so no answer names something a restart would not know. Without a state
   * file it does nothing.
   */
  commit(): void {
    if (!this.file) return;
    let changed = this.unsaved;
    for (const registry of this.registries.values()) if (registry.settle()) changed = true;
    if (this.options.links.settle()) changed = true;
    if (this.idsMoved) changed = true;
    const quotaText = JSON.stringify(this.options.gate.quotaUsed());
    if (quotaText !== this.quotaText) changed = true;
    if (!changed) return;
    this.write();
  }

  /** Give the state file up (for another sandbox to take). */
  close(): void {
    this.file?.unlock();
  }

  private write(): void {
    const file = this.file;
    if (!file) return;
    // A failed write is tried again with the next request's.
    this.unsaved = true;
    this.idsMoved = false;
    this.quotaText = JSON.stringify(this.options.gate.quotaUsed());
    const registries = [...this.registries]
      .map(([name, registry]) => `${JSON.stringify(name)}:${registry.toJson()}`)
      .join(',');
    const head = {
      format: STATE_FILE_FORMAT,
      version: STATE_FILE_VERSION,
      savedAt: this.options.now(),
      seed: this.options.seed,
      starts: this.startCount,
      port: this.port,
      ids: this.ids.position,
    };
    const headText = JSON.stringify(head).slice(0, -1);
    file.write(
      `${headText},"quotaUsed":${this.quotaText},"links":${this.options.links.toJson()},"registries":{${registries}}}\n`,
    );
    this.unsaved = false;
  }

  /** The file's content, validated; throws UnusableStateError saying what is wrong. */
  private parse(text: string): z.infer<typeof fileSchema> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new UnusableStateError(`it is not JSON (${errorMessage(error)})`);
    }
    const envelope = envelopeSchema.safeParse(json);
    if (!envelope.success) {
      throw new UnusableStateError(
        `it is not a sandbox state file (expected "format": "${STATE_FILE_FORMAT}")`,
      );
    }
    if (envelope.data.version !== STATE_FILE_VERSION) {
      throw new UnusableStateError(
        `it has version ${envelope.data.version}, and this sandbox reads version ${STATE_FILE_VERSION} only`,
      );
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) throw new UnusableStateError(formatIssues(parsed.error));
    const unknown = Object.keys(parsed.data.registries).filter((name) => !this.registries.has(name));
    if (unknown.length > 0) throw new UnusableStateError(`registries.${unknown[0]}: unknown registry`);
    return parsed.data;
  }

  /** Replace the state with the file's; all or nothing. Returns how many records it holds. */
  private restore(stored: z.infer<typeof fileSchema>): number {
    try {
      this.options.links.restore(stored.links);
      let records = 0;
      for (const [name, registry] of this.registries) {
        registry.restore(stored.registries[name] ?? {});
        records += registry.size;
      }
      this.options.gate.restoreQuotaUsed(stored.quotaUsed);
      this.quotaText = JSON.stringify(this.options.gate.quotaUsed());
      this.ids = new SeededRandom(stored.ids);
      this.port = stored.port;
      return records;
    } catch (error) {
      this.restoreEmpty();
      throw new UnusableStateError(errorMessage(error));
    }
  }

  private restoreEmpty(): void {
    this.options.links.restore({ links: {}, documents: {} });
    for (const registry of this.registries.values()) registry.restore({});
  }
}

/** A state file that cannot be used; its message says why, naming the field. */
class UnusableStateError extends Error {
  override name = 'UnusableStateError';
}
