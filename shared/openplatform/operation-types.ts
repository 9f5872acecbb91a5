/**
 * The types of the full operation catalogue (every operation the platform publishes), shared by the
 * generator (scripts/generate-catalogue.ts), the generated rows and shapes, the client, the sandbox
 * and the CLI.
 */

/**
 * A compact description of a JSON value, from which zod schemas and sandbox answers are built:
 * a primitive name, `object` (any object), `any`, `file` (a multipart file), an array, an object with
 * properties, or a reference to a shared definition.
 */
export type Shape =
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'object'
  | 'any'
  | 'file'
  | { array: Shape }
  | { props: Record<string, Shape>; required?: string[] }
  | { ref: string };

export interface OperationParameter {
  name: string;
  /** Where it travels; `path` parameters are taken from the path template (the file declares none). */
  in: 'query' | 'path' | 'header';
  required: boolean;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array';
}

/** What a listing says about a parameter or field beyond its type. */
export interface FieldNote {
  description?: string;
  example?: unknown;
}

/** A top-level field of a request body, for listings. */
export interface BodyField {
  name: string;
  required: boolean;
  /** `string`, `integer`, `object`, `string[]`... */
  type: string;
  description?: string;
  example?: unknown;
}

/**
 * How the answer is wrapped: `envelope` (`{data, status, error_code, error_msg}`, 346 operations),
 * `flat` (the envelope's status and code beside the answer's own fields), `plain` (no envelope).
 */
export type AnswerForm = 'envelope' | 'flat' | 'plain';

/** How an operation pages its results: which parameter moves, where, and which fields hold the page. */
export interface Paging {
  /** `offset`: the parameter counts items; `page`: it counts pages from 1. */
  style: 'offset' | 'page';
  in: 'query' | 'body';
  param: string;
  /** The page size parameter, when there is one. */
  sizeParam?: string;
  /** The answer's array of results. */
  items: string;
  /** The answer's total count, when it has one. */
  total?: string;
}

/** Descriptions and examples, kept apart from the rows so the CLI starts without them. */
export interface OperationDetails {
  parameters: Record<string, FieldNote>;
  body: BodyField[];
}

export interface OperationRow {
  operationId: string;
  /** The documented short id (`ai35-1`, `p002`); several operations may share one, some have none. */
  shortId?: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The OpenAPI tag, which is also the permission group of an API key. */
  group: string;
  summary: string;
  /** As declared (the event-stream ones are a known defect: opflow sends JSON). */
  requestContentType: string;
  bodyEncoding: 'json' | 'multipart' | 'none';
  /** Whether repeating the call is harmless (`read`) or may create or change something upstream. */
  effect: 'create' | 'read' | 'update';
  /** Answers with an event stream. */
  stream: boolean;
  answer: AnswerForm;
  parameters: OperationParameter[];
  /** The names of the request body's top-level fields (their types are in the shapes). */
  bodyFields: string[];
  paging?: Paging;
  /** One of the operations opflow's workflows use, with hand-written schemas. */
  workflow?: true;
}
