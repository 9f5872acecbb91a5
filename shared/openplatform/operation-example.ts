/**
 * A request that an operation accepts, built from its shapes and the examples of the description:
 * what `opflow operations <id>` shows as a starting point, and what the conformance tests send to
 * the sandbox. Required parameters and fields only (plus the paging ones), each the description's
 * example when that has the right type, else a plain value of the type.
 */
import type { OperationDetails, OperationRow, Shape } from './operation-types';

export interface ExampleRequest {
  parameters: Record<string, unknown>;
  body: Record<string, unknown> | undefined;
}

export function exampleRequest(
  row: OperationRow,
  details: OperationDetails | undefined,
  definitions: Record<string, Shape>,
  bodyShape: Shape | undefined,
): ExampleRequest {
  const parameters: Record<string, unknown> = {};
  for (const parameter of row.parameters) {
    if (!parameter.required) continue;
    const example = details?.parameters[parameter.name]?.example;
    parameters[parameter.name] = fits(example, parameter.type)
      ? example
      : plainValue(parameter.type, parameter.name);
  }
  if (bodyShape === undefined) return { parameters, body: undefined };
  const resolved = resolve(bodyShape, definitions);
  const body: Record<string, unknown> = {};
  if (typeof resolved === 'object' && 'props' in resolved) {
    const required = new Set(resolved.required ?? []);
    for (const [name, shape] of Object.entries(resolved.props)) {
      if (!required.has(name)) continue;
      const example = details?.body.find((field) => field.name === name)?.example;
      body[name] = valueFor(shape, definitions, example, name, 0);
    }
  }
  return { parameters, body };
}

function resolve(shape: Shape, definitions: Record<string, Shape>): Shape {
  return typeof shape === 'object' && 'ref' in shape
    ? resolve(definitions[shape.ref] ?? 'any', definitions)
    : shape;
}

function fits(value: unknown, type: string): boolean {
  if (value === undefined || value === null) return false;
  switch (type) {
    case 'integer':
      return (
        Number.isInteger(typeof value === 'string' ? Number(value) : value) && String(value).trim() !== ''
      );
    case 'number':
      return (
        Number.isFinite(typeof value === 'string' ? Number(value) : value) && String(value).trim() !== ''
      );
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false';
    case 'array':
      return Array.isArray(value);
    default:
      return (typeof value === 'string' && value.trim() !== '') || typeof value === 'number';
  }
}

function plainValue(type: string, name: string): unknown {
  switch (type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    case 'array':
      return [name];
    default:
      return `example-${name}`;
  }
}

/** A value of `shape`: the example when it fits (scalars only), else a plain one; objects get their required fields. */
function valueFor(
  shape: Shape,
  definitions: Record<string, Shape>,
  example: unknown,
  name: string,
  depth: number,
): unknown {
  const resolved = resolve(shape, definitions);
  if (typeof resolved === 'string') {
    switch (resolved) {
      case 'string':
        return typeof example === 'string' && example.trim() !== '' ? example : `example-${name}`;
      case 'integer':
        return Number.isInteger(example) ? example : 1;
      case 'number':
        return typeof example === 'number' ? example : 1;
      case 'boolean':
        return typeof example === 'boolean' ? example : false;
      case 'file':
        return `${name}.pdf`;
      default:
        return {};
    }
  }
  if ('array' in resolved)
    return depth > 4 ? [] : [valueFor(resolved.array, definitions, undefined, name, depth + 1)];
  if ('ref' in resolved) return {};
  const out: Record<string, unknown> = {};
  for (const field of resolved.required ?? []) {
    const property = resolved.props[field];
    if (property !== undefined) out[field] = valueFor(property, definitions, undefined, field, depth + 1);
  }
  return out;
}
