/**
 * Drift: with a drift seed, the sandbox's world moves between runs, so a scheduled report's
 * "changes since the previous run" can be seen working. Each time the sandbox is asked the same
 * thing again (a patent count of the same query, a novelty search of the same text, a question),
 * that subject's run number goes up by one, and the answer follows from the drift seed and the run
 * number: a patent count grows by a few, a novelty search gains or loses a reference, an answer's
 * wording moves. Run 0 (the first time) answers what the sandbox answers without drift; the same
 * seed and run number answer the same.
 *
 * The run numbers are kept by a hash of the subject (never its text). With a state file they are
 * also kept in `<state file without .json>.drift.json` beside it, which outlives the state file's
 * discard, so successive opflow processes see successive runs.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as z from 'zod';
import { hash32, hashText } from './seeded';

/** Where a subject stands: the drift seed and how many times it was asked before. */
export interface DriftRun {
  seed: number;
  run: number;
}

const fileSchema = z.strictObject({
  version: z.literal(1),
  seed: z.number().int(),
  runs: z.record(z.string().regex(/^[0-9a-f]{16}$/), z.number().int().nonnegative()),
});

/** The drift counters' file for a state file: `sandbox-state.json` → `sandbox-state.drift.json`. */
export function driftFileFor(stateFile: string): string {
  return join(dirname(stateFile), `${basename(stateFile).replace(/\.json$/i, '')}.drift.json`);
}

export class DriftCounter {
  private readonly runs = new Map<string, number>();

  /** `file`: where the run numbers are kept between sandboxes (memory only when omitted). */
  constructor(
    readonly seed: number,
    private readonly file?: string,
  ) {
    if (!file || !existsSync(file)) return;
    try {
      const parsed = fileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      // Another seed's counters (or a damaged file) start over: runs of one seed only compare.
      if (parsed.success && parsed.data.seed === seed) {
        for (const [key, run] of Object.entries(parsed.data.runs)) this.runs.set(key, run);
      }
    } catch {
      // Unreadable: start over; the next write replaces it.
    }
  }

  /** The subject's run number (0 the first time it is asked), counting this call. */
  next(subject: string): DriftRun {
    const key = hashText(`${this.seed}\u0000${subject}`).slice(0, 16);
    const run = this.runs.get(key) ?? 0;
    this.runs.set(key, run + 1);
    this.save();
    return { seed: this.seed, run };
  }

  private save(): void {
    if (!this.file) return;
    const temporary = `${this.file}.tmp`;
    writeFileSync(
      temporary,
      `${JSON.stringify({ version: 1, seed: this.seed, runs: Object.fromEntries(this.runs) })}\n`,
    );
    renameSync(temporary, this.file);
  }
}

/** How much a count has grown by run `run`: 1 to 5 per run, seeded by the subject. */
export function driftedGrowth(drift: DriftRun | undefined, subject: string): number {
  let growth = 0;
  for (let run = 1; run <= (drift?.run ?? 0); run++) growth += 1 + (hash32(drift!.seed, subject, run) % 5);
  return growth;
}

/** Parts to mix into a content generator's seed: none at run 0 (or without drift). */
export function driftSalt(drift: DriftRun | undefined): (string | number)[] {
  return drift && drift.run > 0 ? ['drift', drift.seed, drift.run] : [];
}
