/**
 * zod schemas of every catalogue operation, built on first use from the generated shapes (decoded
 * lazily: the CLI and the Lambda functions that never call a generic operation never decode them). The 50 workflow operations keep their hand-written schemas (schemas/requests.ts and
 * schemas/responses.ts), which add what the file states only in prose (limits, enumerations).
 *
 * Requests are checked before anything is sent and billed: the body's top level is strict (a
 * misspelt field is an error), nested objects are loose, required fields are required. Answers are
 * parsed leniently, like the hand-written ones: every field optional and nullable, unknown fields
 * kept, numbers and booleans accepted in their string forms.
 */
import * as z from 'zod';
import type { OperationId } from './catalogue';
import { packedShapes } from './generated/shapes';
import { lenientBoolean, lenientInt, lenientNumber, lenientString } from './lenient';
import type { OperationDetails, OperationRow, Shape } from './operation-types';
import { requestSchemas } from './schemas/requests';
import { responseDataSchemas } from './schemas/responses';
import { unpack } from './unpack';

export interface OperationSchemas {
  /** The query, path and header parameters, by name. */
  parameters: z.ZodType<Record<string, unknown>>;
  /** The request body; undefined when the operation takes none. */
  body: z.ZodType | undefined;
  /** The answer's data (inside the envelope, or the whole answer when there is none). */
  data: z.ZodType;
}

export type ShapeTables = {
  definitions: Record<string, Shape>;
  operationShapes: Record<string, { body?: Shape; data: Shape }>;
};

let tables: ShapeTables | undefined;

/** The generated shapes, decoded once, on first need (the packed text is small; decoding is not free). */
export function shapeTables(): ShapeTables {
  if (tables) return tables;
  const { definitions, operations } = unpack<{
    definitions: ShapeTables['definitions'];
    operations: ShapeTables['operationShapes'];
  }>(packedShapes);
  tables = { definitions, operationShapes: operations };
  return tables;
}

/** {@link shapeTables}, for callers that treat loading as asynchronous. */
export async function loadShapeTables(): Promise<ShapeTables> {
  return shapeTables();
}

let details: Promise<Record<string, OperationDetails>> | undefined;

/** Descriptions and examples of every operation's parameters and fields (listings only). */
export function loadOperationDetails(): Promise<Record<string, OperationDetails>> {
  details ??= import('./generated/details').then(({ packedDetails }) =>
    unpack<Record<string, OperationDetails>>(packedDetails),
  );
  return details;
}

const cache = new Map<string, OperationSchemas>();

/** The schemas of one operation (decodes the shapes on first use). */
export function operationSchemas(row: OperationRow): OperationSchemas {
  return cache.get(row.operationId) ?? operationSchemasFrom(shapeTables(), row);
}

/** {@link operationSchemas}, for callers that treat loading as asynchronous. */
export async function loadOperationSchemas(row: OperationRow): Promise<OperationSchemas> {
  return operationSchemas(row);
}

/** The schemas of one operation from already loaded shapes. */
export function operationSchemasFrom(shapeTables: ShapeTables, row: OperationRow): OperationSchemas {
  const cached = cache.get(row.operationId);
  if (cached) return cached;
  const builder = new ZodBuilder(shapeTables.definitions);
  const shapes = shapeTables.operationShapes[row.operationId];
  if (!shapes) throw new Error(`no shapes for ${row.operationId}: regenerate the catalogue`);
  const handWritten = row.workflow ? (row.operationId as OperationId) : undefined;
  let parameters = parametersSchema(row);
  let body = shapes.body === undefined ? undefined : builder.request(shapes.body, true);
  let data = builder.answer(shapes.data);
  if (handWritten) {
    // The workflow operations' own schemas: the body's, or for a GET its query parameters'.
    if (row.method === 'GET') parameters = requestSchemas[handWritten] as never;
    else body = requestSchemas[handWritten];
    data = responseDataSchemas[handWritten];
  }
  const schemas = { parameters, body, data };
  cache.set(row.operationId, schemas);
  return schemas;
}

/** Parameters arrive as text from a command line or a URL: each is read leniently by its type. */
function parametersSchema(row: OperationRow): z.ZodType<Record<string, unknown>> {
  const fields: Record<string, z.ZodType> = {};
  for (const parameter of row.parameters) {
    const base =
      parameter.type === 'integer'
        ? lenientInt
        : parameter.type === 'number'
          ? lenientNumber
          : parameter.type === 'boolean'
            ? lenientBoolean
            : parameter.type === 'array'
              ? z.preprocess(
                  (value) => (typeof value === 'string' ? value.split(',') : value),
                  z.array(lenientString),
                )
              : lenientString.pipe(z.string().min(1, 'must not be empty'));
    fields[parameter.name] = parameter.required ? base : base.optional();
  }
  return z.strictObject(fields) as z.ZodType<Record<string, unknown>>;
}

class ZodBuilder {
  private readonly requests = new Map<string, z.ZodType>();
  private readonly answers = new Map<string, z.ZodType>();

  constructor(private readonly definitions: Record<string, Shape>) {}

  private definition(name: string): Shape {
    const shape = this.definitions[name];
    if (shape === undefined) throw new Error(`unknown shape definition ${name}: regenerate the catalogue`);
    return shape;
  }

  /** A request schema: required fields required, the top level strict, nested objects loose. */
  request(shape: Shape, top = false): z.ZodType {
    if (typeof shape === 'string') return requestPrimitive(shape);
    if ('array' in shape) return z.array(this.request(shape.array));
    if ('ref' in shape) {
      if (top) return this.request(this.definition(shape.ref), true);
      const known = this.requests.get(shape.ref);
      if (known) return known;
      const built = this.request(this.definition(shape.ref));
      this.requests.set(shape.ref, built);
      return built;
    }
    const required = new Set(shape.required ?? []);
    const fields: Record<string, z.ZodType> = {};
    for (const [name, property] of Object.entries(shape.props)) {
      const field = this.request(property);
      fields[name] = required.has(name) ? field : field.optional();
    }
    return top ? z.strictObject(fields) : z.looseObject(fields);
  }

  /** An answer schema: everything optional and nullable, primitives lenient, unknown fields kept. */
  answer(shape: Shape): z.ZodType {
    if (typeof shape === 'string') return answerPrimitive(shape);
    if ('array' in shape) return z.array(this.answer(shape.array).nullable());
    if ('ref' in shape) {
      const known = this.answers.get(shape.ref);
      if (known) return known;
      const built = this.answer(this.definition(shape.ref));
      this.answers.set(shape.ref, built);
      return built;
    }
    const fields: Record<string, z.ZodType> = {};
    for (const [name, property] of Object.entries(shape.props))
      fields[name] = this.answer(property).nullish();
    return z.looseObject(fields);
  }
}

function requestPrimitive(shape: Exclude<Shape, object>): z.ZodType {
  switch (shape) {
    case 'string':
      // The description types some numbers as strings (c037's page_number): a number is sent as text.
      return z.preprocess((value) => (typeof value === 'number' ? String(value) : value), z.string());
    case 'integer':
      return z.number().int();
    case 'number':
      return z.number();
    case 'boolean':
      return z.boolean();
    case 'object':
      return z.record(z.string(), z.unknown());
    case 'file':
      // A multipart file: its content (a Blob or File), or its name as the sandbox reads a form.
      return z.union([z.string().min(1), z.instanceof(Blob)]);
    default:
      return z.unknown();
  }
}

function answerPrimitive(shape: Exclude<Shape, object>): z.ZodType {
  switch (shape) {
    case 'string':
      return lenientString;
    case 'integer':
      return lenientInt;
    case 'number':
      return lenientNumber;
    case 'boolean':
      return lenientBoolean;
    case 'object':
      return z.record(z.string(), z.unknown());
    default:
      return z.unknown();
  }
}
