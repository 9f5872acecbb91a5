/**
 * Stable hashing and seeded randomness, so the sandbox answers the same input the same way.
 *
 * Content generators take a `SeededRandom` built from the run's seed and a hash of the input, never
 * `Math.random`, so tests can assert what the sandbox says.
 */
import { createHash } from 'node:crypto';

/** Hex SHA-256 of a text. */
export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with object keys sorted, so two equal bodies hash the same whatever their key order. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A 32-bit unsigned integer derived from the parts. */
export function hash32(...parts: readonly (string | number)[]): number {
  return Number.parseInt(hashText(parts.join('\u0000')).slice(0, 8), 16) >>> 0;
}

/** mulberry32: small, fast and good enough for test data; not for secrets. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A generator for one purpose, e.g. `SeededRandom.from(seed, inputHash, 'references')`. */
  static from(...parts: readonly (string | number)[]): SeededRandom {
    return new SeededRandom(hash32(...parts));
  }

  /**
   * Where the generator is: `new SeededRandom(position)` goes on with the same sequence (a restarted
   * sandbox continues its ids instead of handing out old ones again).
   */
  get position(): number {
    return this.state;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** `count` distinct items in a shuffled order (all of them when there are fewer). */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [pool[i], pool[j]] = [pool[j] as T, pool[i] as T];
    }
    return pool.slice(0, count);
  }

  hex(length: number): string {
    let out = '';
    while (out.length < length) out += Math.floor(this.next() * 16).toString(16);
    return out;
  }

  digits(length: number): string {
    let out = String(this.int(1, 9));
    while (out.length < length) out += String(this.int(0, 9));
    return out;
  }

  /** A UUID-shaped identifier (version 4 layout), e.g. the platform's `report_id`. */
  uuid(): string {
    const hex = this.hex(32);
    const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}
