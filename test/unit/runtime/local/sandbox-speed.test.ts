// Demo speed: poll schedules shrink with the sandbox's speed; steps without a schedule stay as they are.
import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../../../shared/engine/workflow';
import { compressPolling } from '../../../../shared/runtime/local/sandbox-speed';
import { noveltyCheck, noveltyPolls } from '../../../../shared/workflows/novelty-check/workflow';

describe('compressPolling', () => {
  const registry = new Map<string, Workflow>([['novelty-check', noveltyCheck as Workflow]]);

  it('divides first delay and ceiling by the speed, keeping growth and give-up time', () => {
    const compressed = compressPolling(registry, 30).get('novelty-check')!;
    const agent = compressed.steps.find((step) => step.name === 'agent-result')!;
    expect(agent.poll).toEqual({
      firstDelayMs: Math.round(noveltyPolls.agentResult.firstDelayMs / 30),
      factor: noveltyPolls.agentResult.factor,
      maxDelayMs: Math.round(noveltyPolls.agentResult.maxDelayMs / 30),
      giveUpAfterMs: noveltyPolls.agentResult.giveUpAfterMs,
    });
  });

  it('leaves steps without a schedule and the original registry untouched', () => {
    const compressed = compressPolling(registry, 30).get('novelty-check')!;
    const submit = compressed.steps.find((step) => step.name === 'submit')!;
    expect(submit.poll).toBeUndefined();
    expect(noveltyCheck.steps.find((step) => step.name === 'agent-result')?.poll).toEqual(
      noveltyPolls.agentResult,
    );
  });

  it('never shrinks a delay to nothing, and does nothing at speed 1', () => {
    const compressed = compressPolling(registry, 100_000).get('novelty-check')!;
    for (const step of compressed.steps) {
      if (step.poll) expect(step.poll.firstDelayMs).toBeGreaterThanOrEqual(50);
    }
    expect(compressPolling(registry, 1)).toBe(registry);
  });
});
