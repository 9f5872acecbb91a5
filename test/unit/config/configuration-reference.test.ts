/**
 * docs/reference/configuration.md is generated from the configuration sources
 * (scripts/generate-config-reference.ts): a setting added, renamed or given a new default without
 * running the generator fails here, so the reference never drifts from the code.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfigurationReference, referencePath } from '../../../scripts/generate-config-reference';

const root = resolve(__dirname, '../../..');

describe('the configuration reference', () => {
  const built = buildConfigurationReference();

  it('lists the settings of every source, with their defaults and descriptions', () => {
    expect(built).toContain('| `OPFLOW_QPS` | `--qps` | `5` |');
    expect(built).toContain('| `OPFLOW_ADMISSION` | `on` | on, off |');
    expect(built).toMatch(/\| `schedules\.\*\.overlap` \| {2}\| `"skip"` \|/);
    expect(built).toMatch(
      /\| `worker\.timeoutSeconds` \| `\d+` \| `\d+` \| whole number, ≥ 3, ≤ 900 \| Lambda timeout in seconds\. \|/,
    );
    expect(built).toContain('`OPFLOW_SERVE_TOKEN`');
  });

  it('is checked in as the generator writes it (run npx tsx scripts/generate-config-reference.ts)', () => {
    expect(readFileSync(resolve(root, referencePath), 'utf8')).toBe(built);
  });
});
