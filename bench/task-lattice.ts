/**
 * A family's true task times as a poll-plan lattice (shared/engine/poll-plan.ts), from draws: the
 * offline benches' "distribution known" plans (throughput-lone-sim.ts, throughput-schedule.ts).
 */
import type { TaskLattice } from '../shared/engine/poll-plan';

/**
 * `samples` (ms, sorted ascending) as a lattice: a first cell from 0 to the shortest (at least 10
 * ms), then cells 1 % apart, each cell's mass the share of samples ending in it and its mid their
 * mean end (the cell's middle when none do); with the samples' mean.
 */
export function latticeOfSorted(samples: readonly number[]): { lattice: TaskLattice; meanMs: number } {
  const draws = samples.length;
  const times = [0];
  const mass = [0];
  const mid = [0];
  let i = 0;
  let from = 0;
  let at = Math.max(10, samples[0] ?? 10);
  while (i < draws) {
    let j = i;
    let sum = 0;
    while (j < draws && (samples[j] ?? 0) <= at) sum += samples[j++] ?? 0;
    times.push(at);
    mass.push((j - i) / draws);
    mid.push(j > i ? sum / (j - i) : (from + at) / 2);
    i = j;
    from = at;
    at *= 1.01;
  }
  const meanMs = samples.reduce((total, ms) => total + ms, 0) / Math.max(1, draws);
  const lattice = {
    times: Float64Array.from(times),
    mass: Float64Array.from(mass),
    mid: Float64Array.from(mid),
    tailIndex: Number.NaN,
  };
  return { lattice, meanMs };
}
