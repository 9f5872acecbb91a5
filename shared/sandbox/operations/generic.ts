/**
 * Answers for every catalogue operation that has no hand-built handler: data generated from the
 * operation's answer shape, so it validates against the client's schema, and deterministic for a
 * given request (seeded by the run's seed, the operation and the request without its paging). A
 * paginated operation answers a stable total and the page asked for, so following pages ends.
 */
import type { OperationRow, Shape } from '../../openplatform/operation-types';
import { hash32, SeededRandom, stableJson } from '../seeded';

/** How deep generated objects go; deeper optional parts are left out (answers stay small). */
const MAX_DEPTH = 5;
/** Items of a list that is not the operation's paged list. */
const MAX_LIST = 3;
/** The default page size when the request gives none. */
export const DEFAULT_PAGE_SIZE = 10;

export interface GenericRequest {
  parameters: Record<string, unknown>;
  body: Record<string, unknown> | undefined;
}

/** The total count a paginated operation answers for this request (whatever page is asked). */
export function pagedTotal(seed: number, row: OperationRow, request: GenericRequest): number {
  return hash32(seed, 'total', row.operationId, stableJson(withoutPaging(row, request))) % 41;
}

/** The answer data of `row` for `request`. */
export function genericAnswer(
  seed: number,
  row: OperationRow,
  request: GenericRequest,
  definitions: Record<string, Shape>,
  data: Shape,
): unknown {
  const random = SeededRandom.from(seed, 'generic', row.operationId, stableJson(withoutPaging(row, request)));
  const generator = new ShapeSampler(random, definitions);
  const paging = row.paging;
  if (!paging) return generator.sample(data, row.operationId, 0);
  const total = pagedTotal(seed, row, request);
  const source = paging.in === 'query' ? request.parameters : (request.body ?? {});
  const size = positive(paging.sizeParam ? source[paging.sizeParam] : undefined) ?? DEFAULT_PAGE_SIZE;
  const position = positive(source[paging.param]);
  const first = paging.style === 'offset' ? (position ?? 0) : ((position ?? 1) - 1) * size;
  const count = Math.max(0, Math.min(size, total - first));
  const answer = generator.sample(data, row.operationId, 0) as Record<string, unknown>;
  const itemShape = listItemShape(data, definitions, paging.items);
  answer[paging.items] = Array.from({ length: count }, (_, index) => {
    const itemRandom = SeededRandom.from(seed, 'item', row.operationId, first + index);
    return new ShapeSampler(itemRandom, definitions).sample(itemShape, paging.items, 1);
  });
  if (paging.total) answer[paging.total] = total;
  return answer;
}

function positive(value: unknown): number | undefined {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 0 ? number : undefined;
}

function withoutPaging(row: OperationRow, request: GenericRequest): GenericRequest {
  const paging = row.paging;
  if (!paging) return request;
  const drop = (source: Record<string, unknown> | undefined) => {
    if (!source) return source;
    const copy = { ...source };
    delete copy[paging.param];
    return copy;
  };
  return paging.in === 'query'
    ? { parameters: drop(request.parameters) ?? {}, body: request.body }
    : { parameters: request.parameters, body: drop(request.body) };
}

function listItemShape(data: Shape, definitions: Record<string, Shape>, field: string): Shape {
  const object = typeof data === 'object' && 'ref' in data ? definitions[data.ref] : data;
  if (typeof object !== 'object' || !object || !('props' in object)) return 'any';
  const list = object.props[field];
  return typeof list === 'object' && 'array' in list ? list.array : 'any';
}

class ShapeSampler {
  constructor(
    private readonly random: SeededRandom,
    private readonly definitions: Record<string, Shape>,
  ) {}

  sample(shape: Shape, name: string, depth: number): unknown {
    if (typeof shape === 'string') return this.primitive(shape, name);
    if ('ref' in shape) return this.sample(this.definitions[shape.ref] ?? 'any', name, depth);
    if ('array' in shape) {
      if (depth >= MAX_DEPTH) return [];
      const count = this.random.int(1, MAX_LIST);
      return Array.from({ length: count }, () => this.sample(shape.array, name, depth + 1));
    }
    const required = new Set(shape.required ?? []);
    const out: Record<string, unknown> = {};
    for (const [field, property] of Object.entries(shape.props)) {
      if (depth >= MAX_DEPTH && !required.has(field)) continue;
      out[field] = this.sample(property, field, depth + 1);
    }
    return out;
  }

  private primitive(shape: Exclude<Shape, object>, name: string): unknown {
    const lower = name.toLowerCase();
    switch (shape) {
      case 'integer':
        if (/year/.test(lower)) return this.random.int(2000, 2025);
        if (/(date|time)$/.test(lower)) return 20_200_101 + this.random.int(0, 50_000);
        return this.random.int(0, 1000);
      case 'number':
        return Math.round(this.random.next() * 10_000) / 100;
      case 'boolean':
        return this.random.chance(0.5);
      case 'object':
      case 'any':
        return { note: `sandbox ${name}` };
      case 'file':
        return `sandbox-${this.random.hex(8)}.pdf`;
      default:
        return this.text(lower);
    }
  }

  private text(name: string): string {
    if (/(^|_)(url|link|href)$|_url$|uri$/.test(name))
      return `https://sandbox.invalid/${this.random.hex(12)}`;
    if (/date|time$|_at$/.test(name)) {
      return `20${this.random.int(10, 25)}-${pad(this.random.int(1, 12))}-${pad(this.random.int(1, 28))}`;
    }
    if (/(^|_)(pn|patent_number|publication_number)$/.test(name)) return `US${this.random.digits(7)}B2`;
    if (/(^|_)id$|_id$|^id|uuid/.test(name)) return this.random.hex(32);
    if (/lang/.test(name)) return this.random.pick(['EN', 'CN']);
    const word = this.random.pick(WORDS);
    return `${name.replace(/_/g, ' ')} ${word} ${this.random.int(1, 99)}`.trim();
  }
}

const pad = (value: number) => String(value).padStart(2, '0');

const WORDS = [
  'battery',
  'sensor',
  'coating',
  'catalyst',
  'polymer',
  'antibody',
  'inverter',
  'membrane',
  'actuator',
  'compound',
];
