/**
 * The workflows' zod schemas (inputs, the common-names wrapper, context keys) are built on first
 * use, not when the registry loads: an api call that lists jobs or a sweep builds none, a step of a
 * novelty check only the novelty check's. Each zod schema costs its construction (zod classic binds
 * its methods to every instance); 300 of the worker's 640 schemas built at a cold start were the
 * workflows' (docs/concepts/lambda-bundles.md).
 *
 * Counted with zod's own construction hook (`globalConfig.postProcessor`, which zod calls on every
 * schema and check it builds), by the first file on the stack that is not zod's; the `z.lazy`
 * wrappers the modules build instead are not counted. The first test fails if zod stops calling it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { globalConfig } from 'zod/v4/core';

/** Schemas built since the hook was set, by the source file that built them. */
const builtBy = new Map<string, number>();

function builder(stack: string): string {
  for (const line of stack.split('\n').slice(1)) {
    const file = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/.exec(line)?.[1];
    if (!file || file.includes('/node_modules/') || file.includes('lazy-schemas.test')) continue;
    const at = file.indexOf('/shared/');
    return at >= 0 ? file.slice(at + 1) : file;
  }
  return '(unknown)';
}

const builtIn = (prefix: string) =>
  [...builtBy.entries()].filter(([file]) => file.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);

beforeAll(() => {
  const limit = Error.stackTraceLimit;
  globalConfig.postProcessor = (schema: { _zod?: { def?: { type?: string } } }) => {
    // A `z.lazy` wrapper is what a module builds instead of its schema: one cheap object, not counted.
    if (schema._zod?.def?.type === 'lazy') return;
    Error.stackTraceLimit = 50;
    const file = builder(new Error().stack ?? '');
    Error.stackTraceLimit = limit;
    builtBy.set(file, (builtBy.get(file) ?? 0) + 1);
  };
});

afterAll(() => {
  globalConfig.postProcessor = undefined;
});

describe("the workflows' schemas", () => {
  it('are counted by the hook (else this test could not fail)', () => {
    z.strictObject({ a: z.string() });
    // Counted, and attributed to this file's caller outside node_modules (vitest's runner) or unknown.
    expect([...builtBy.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
  });

  it('are not built when the registry loads, nor when its names and steps are read', async () => {
    const { workflows, workflowNames } = await import('../../../shared/workflows');
    expect(workflowNames.length).toBe(workflows.size);
    for (const workflow of workflows.values()) expect(workflow.steps.length).toBeGreaterThan(0);
    expect(
      Object.fromEntries([...builtBy.entries()].filter(([file]) => file.startsWith('shared/workflows/'))),
    ).toEqual({});
  });

  it("nor are the engine's, the client's and the configuration's: stream frames, kept stream outputs, the catalogue's helpers, webhooks and schedules", async () => {
    await import('../../../shared/openplatform/stream');
    await import('../../../shared/openplatform/schemas/requests');
    await import('../../../shared/openplatform/schemas/responses');
    await import('../../../shared/engine/workflow');
    // The configuration's (webhooks, schedules): the api imports it for its routes, and parses it
    // only when the stack set webhooks or schedules up.
    await import('../../../shared/config/opflow-config');
    await import('../../../shared/http/webhooks');
    for (const file of [
      'shared/openplatform/stream.ts',
      'shared/openplatform/schemas/',
      'shared/engine/workflow.ts',
      'shared/config/opflow-config.ts',
    ]) {
      expect(builtIn(file), file).toBe(0);
    }
  });

  it("are built on first use: one workflow's input, not the others'", async () => {
    const { workflows } = await import('../../../shared/workflows');
    const parsed = workflows.get('patent-count')?.input.safeParse({ text: 'TACD:(battery)' });
    expect(parsed?.success).toBe(true);
    expect(builtIn('shared/workflows/patent-count/workflow.ts')).toBeGreaterThan(5);
    expect(builtIn('shared/workflows/common/common-names.ts')).toBeGreaterThan(0);
    expect(builtIn('shared/workflows/novelty-check/')).toBe(0);
    expect(builtIn('shared/workflows/call/')).toBe(0);
  });
});
