/**
 * The fault rules in force, changeable while the sandbox runs (tests call `set`/`add`/`clear`;
 * benchmarks use the admin endpoint). For each call it decides, with its seeded generator, which
 * rules fire: every matching latency rule adds its delay; the first matching rule of another kind
 * decides the answer; the first matching `stream-variant` rule picks the frame encoding.
 */
import { findOperation } from '../openplatform/catalogue';
import { findCatalogueOperation } from '../openplatform/operations';
import { downloadKinds, type FaultRule, parseFaultRules, streamOnlyKinds } from './fault-rules';
import type { StreamVariant } from './operations/contract';
import { SeededRandom } from './seeded';

interface ActiveRule {
  rule: FaultRule;
  /** The operationId it targets, `*` or `download`. */
  target: string;
  remaining: number;
}

export interface FaultTarget {
  /** A catalogue operationId, or `download`. */
  operationId: string;
  stream: boolean;
}

export interface FaultDecision {
  /** Wall-clock delay before answering. */
  latencyMs: number;
  /** The rule that decides the answer, if one fired (never `latency` or `stream-variant`). */
  outcome?: FaultRule;
  streamVariant?: StreamVariant;
}

export class FaultController {
  private active: ActiveRule[] = [];
  private readonly random: SeededRandom;

  constructor(rules: readonly FaultRule[] = [], seed = 0) {
    this.random = SeededRandom.from(seed, 'faults');
    this.set(rules);
  }

  /** Replace every rule. Throws (naming the rule and field) when one is invalid. */
  set(rules: readonly FaultRule[]): void {
    this.active = parseFaultRules(rules).map(toActive);
  }

  /** Add one rule after the others. */
  add(rule: FaultRule): void {
    const [parsed] = parseFaultRules([rule]);
    if (parsed) this.active.push(toActive(parsed));
  }

  /** Remove every rule. */
  clear(): void {
    this.active = [];
  }

  /** The rules in force; `times` shows what is left of each. */
  rules(): FaultRule[] {
    return this.active.map(({ rule, remaining }) =>
      Number.isFinite(remaining) ? { ...rule, times: remaining } : { ...rule },
    );
  }

  /** @internal Decide the faults of one call, consuming `times`. */
  decide(target: FaultTarget): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0 };
    for (const active of this.active) {
      const { rule } = active;
      if (!applies(active, target)) continue;
      // A slot already taken: the rule neither fires nor spends a draw of the generator.
      if (
        rule.kind === 'stream-variant' ? decision.streamVariant : rule.kind !== 'latency' && decision.outcome
      )
        continue;
      if (!this.fires(active)) continue;
      if (rule.kind === 'latency') {
        const min = rule.minMs ?? 0;
        decision.latencyMs += min + this.random.next() * Math.max(0, rule.maxMs - min);
      } else if (rule.kind === 'stream-variant') {
        decision.streamVariant = rule.streamVariant;
      } else {
        decision.outcome = rule;
      }
      active.remaining -= 1;
    }
    this.active = this.active.filter((active) => active.remaining > 0);
    return decision;
  }

  private fires(active: ActiveRule): boolean {
    const probability = active.rule.probability ?? 1;
    return probability >= 1 || this.random.chance(probability);
  }
}

function toActive(rule: FaultRule): ActiveRule {
  const operation = rule.operation ?? '*';
  const target =
    operation === '*' || operation === 'download'
      ? operation
      : (findOperation(operation)?.operationId ??
        findCatalogueOperation(operation)?.operationId ??
        operation);
  return { rule, target, remaining: rule.times ?? Number.POSITIVE_INFINITY };
}

function applies(active: ActiveRule, target: FaultTarget): boolean {
  const kind = active.rule.kind;
  if (target.operationId === 'download') return active.target === 'download' && downloadKinds.has(kind);
  if (active.target !== '*' && active.target !== target.operationId) return false;
  return target.stream || !streamOnlyKinds.has(kind);
}
