/**
 * Generates opflow's catalogue of every Open Platform operation from the platform's published OpenAPI
 * file, into checked-in code under shared/openplatform/generated/ (the project builds and tests without
 * the file):
 *
 * - `operations.ts`: one row per operation (id, short id, method, path, group, summary, declared request
 *   content type, parameters, top-level body fields, answer form, paging). Small: the CLI imports it.
 * - `shapes.ts`: the request body and answer data of every operation as compact shapes, turned into zod
 *   schemas on demand (shared/openplatform/operation-schemas.ts). Imported lazily.
 *
 * The description's defects are handled here, each on purpose and each checked: the two schemas that
 * are referenced but missing become free-form objects; the event-stream *request* content types are
 * recorded as declared but sent as JSON; path parameters the file does not declare are taken from the
 * path template. Any other dangling reference stops the generator, so a new defect is not papered over.
 *
 *   npm run generate:catalogue [-- --reference <file>] [--check]
 *
 * `--check` writes nothing and exits 1 when the checked-in code differs from what the file generates.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';
import { catalogue as workflowCatalogue } from '../shared/openplatform/catalogue';
import type {
  AnswerForm,
  BodyField,
  FieldNote,
  OperationDetails,
  OperationParameter,
  OperationRow,
  Paging,
  Shape,
} from '../shared/openplatform/operation-types';
import { unpack } from '../shared/openplatform/unpack';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'shared/openplatform/generated');
const markdownFile = path.join(root, 'docs/operations.md');

/** The two schemas the file references but does not define (a known defect of version 1.0.0). */
export const KNOWN_MISSING_SCHEMAS = [
  'AI73-6FindSolutionCitationReferenceList_Map«string,object»',
  'AI88-2CompanyMonitorAggregatedInfo_Map<string,object>',
];

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  description?: string;
  example?: unknown;
  enum?: unknown[];
};
type OpenApiOperation = {
  operationId: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
};
type OpenApi = {
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
};

function parseArgs(argv: string[]) {
  const at = argv.indexOf('--reference');
  // Beside the repository (../shared), or beside the folder of worktrees (../../shared).
  const candidates = ['../shared', '../../shared'].map((dir) =>
    path.resolve(root, dir, 'reference/open-platform-openapi.json'),
  );
  const reference =
    (at >= 0 ? argv[at + 1] : undefined) ??
    process.env['OPFLOW_REFERENCE_OPENAPI'] ??
    candidates.find((file) => existsSync(file)) ??
    (candidates[0] as string);
  return { reference, check: argv.includes('--check') };
}

/** Short, one-line prose for listings: tags removed, spaces collapsed, at most `max` characters. */
export function plain(text: string | undefined, max = 160): string | undefined {
  if (!text) return undefined;
  const flat = text
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (flat === '') return undefined;
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/** Turns the file's schemas into shapes, sharing identical object shapes as named definitions. */
class ShapeBuilder {
  readonly definitions: Record<string, Shape> = {};
  private readonly byHash = new Map<string, string>();
  private readonly byComponent = new Map<string, Shape>();
  private readonly resolving = new Set<string>();
  readonly missingSeen = new Set<string>();

  constructor(private readonly components: Record<string, JsonSchema>) {}

  shape(schema: JsonSchema | undefined): Shape {
    if (!schema) return 'any';
    if (schema.$ref)
      return this.component(decodeURIComponent(schema.$ref.replace('#/components/schemas/', '')));
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    switch (type) {
      case 'string':
        return schema.format === 'binary' ? 'file' : 'string';
      case 'integer':
        return 'integer';
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'file':
        return 'file';
      case 'array':
        return { array: this.shape(schema.items) };
      case 'object':
      case undefined: {
        if (!schema.properties) return schema.items ? { array: this.shape(schema.items) } : 'object';
        const props: Record<string, Shape> = {};
        for (const [name, property] of Object.entries(schema.properties)) props[name] = this.shape(property);
        const required = (schema.required ?? []).filter((name) => name in props);
        return this.share(required.length ? { props, required } : { props });
      }
      default:
        throw new Error(`unsupported schema type ${JSON.stringify(schema.type)}`);
    }
  }

  private component(name: string): Shape {
    const known = this.byComponent.get(name);
    if (known) return known;
    const schema = this.components[name];
    if (!schema) {
      if (!KNOWN_MISSING_SCHEMAS.includes(name)) {
        throw new Error(`schema "${name}" is referenced but missing, and is not a known defect`);
      }
      // Both are Java `Map<string,object>`: a free-form object is what they stand for.
      this.missingSeen.add(name);
      return 'object';
    }
    if (this.resolving.has(name)) throw new Error(`schema "${name}" refers to itself; not supported yet`);
    this.resolving.add(name);
    const shape = this.shape(schema);
    this.resolving.delete(name);
    this.byComponent.set(name, shape);
    return shape;
  }

  /** Objects seen more than once by content become one definition `{ref}`. */
  private share(object: Shape & object): Shape {
    const text = JSON.stringify(object);
    if (text.length < 60) return object;
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
    let name = this.byHash.get(hash);
    if (!name) {
      name = `d${this.byHash.size}`;
      this.byHash.set(hash, name);
      this.definitions[name] = object;
    }
    return { ref: name };
  }
}

const SHORT_ID = /^([a-z]+\d+(?:-\d+)?)(?=[A-Z]|$)/;

/** `ai35-1NoveltySearchSubmit` → `ai35-1`; names without a documented number have none. */
export function shortIdOf(operationId: string): string | undefined {
  return SHORT_ID.exec(operationId)?.[1];
}

const CREATE_WORDS =
  /submit|creat|generat|export|upload|translat|task|job|confirm|update|edit|delete|alert|parsing|extract|ocsr|chat|stream|aicc|statement/i;
const READ_WORDS = /status|result|query|get|detail|search|list/i;

/** Whether repeating the call is harmless; unsure means `create` (a blind retry could be billed twice). */
function effectOf(operationId: string, method: string, summary: string): OperationRow['effect'] {
  const known = (workflowCatalogue as Record<string, { effect: OperationRow['effect'] }>)[operationId];
  if (known) return known.effect;
  if (method === 'GET') return 'read';
  if (method === 'DELETE') return 'update';
  const name = `${operationId.replace(SHORT_ID, '')} ${summary}`;
  if (/Job(Id)?(Status|Result)|TaskResult|GetTaskResult|Query$/i.test(operationId)) return 'read';
  if (CREATE_WORDS.test(name) && !/^(Get|Query)/i.test(summary.replace(/^\S+\s/, ''))) return 'create';
  return READ_WORDS.test(name) ? 'read' : 'create';
}

function bodyEncodingOf(contentType: string): OperationRow['bodyEncoding'] {
  if (contentType === 'none') return 'none';
  if (contentType.startsWith('multipart/')) return 'multipart';
  // application/json (with or without charset), the vendor JSON types, */*, and the event-stream
  // request types (a defect: the platform reads JSON) are all sent as JSON.
  return 'json';
}

function exampleOf(schema: JsonSchema | undefined): unknown {
  const value = schema?.example;
  if (value === undefined || value === null) return undefined;
  const text = JSON.stringify(value);
  return text.length > 200 ? undefined : value;
}

function pagingOf(parameters: OperationParameter[], body: BodyField[], data: Shape, builder: ShapeBuilder) {
  const fields = [
    ...parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, in: 'query' as const })),
    ...body.map((f) => ({ name: f.name, in: 'body' as const })),
  ];
  const find = (...names: string[]) => fields.find((field) => names.includes(field.name));
  const offset = find('offset');
  const page = find('page', 'page_number', 'page_no', 'pageNum');
  const size = find('limit', 'size', 'page_size', 'pageSize');
  if (!offset && !page) return undefined;
  const object = resolveShape(data, builder);
  if (typeof object !== 'object' || !('props' in object)) return undefined;
  const entries = Object.entries(object.props);
  const items = entries.find(([, shape]) => typeof shape === 'object' && 'array' in shape)?.[0];
  if (!items) return undefined;
  const counts = entries.filter(([, shape]) => shape === 'integer').map(([name]) => name);
  const total = counts.find((name) => /total/i.test(name)) ?? counts.find((name) => /count/i.test(name));
  const paging: Paging = offset
    ? { style: 'offset', in: offset.in, param: offset.name, items }
    : { style: 'page', in: page?.in ?? 'body', param: page?.name ?? 'page', items };
  if (size) paging.sizeParam = size.name;
  if (total) paging.total = total;
  return paging;
}

function resolveShape(shape: Shape, builder: ShapeBuilder): Shape {
  return typeof shape === 'object' && 'ref' in shape ? (builder.definitions[shape.ref] ?? 'any') : shape;
}

export function generate(spec: OpenApi) {
  const builder = new ShapeBuilder(spec.components.schemas);
  const rows: OperationRow[] = [];
  const shapes: Record<string, { body?: Shape; data: Shape }> = {};
  const undeclaredPathParameters: string[] = [];
  const details: Record<string, OperationDetails> = {};
  for (const [pathTemplate, methods] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const id = operation.operationId;
      const contentType = Object.keys(operation.requestBody?.content ?? {})[0] ?? 'none';
      const parameterNotes: Record<string, FieldNote> = {};
      const parameters: OperationParameter[] = (operation.parameters ?? []).map((parameter) => {
        const row: OperationParameter = {
          name: parameter.name,
          in: parameter.in as OperationParameter['in'],
          required: parameter.required === true,
          type: primitive(builder.shape(parameter.schema)),
        };
        const note: FieldNote = {};
        const description = plain(parameter.description ?? parameter.schema?.description);
        if (description) note.description = description;
        const example = exampleOf(parameter.schema);
        if (example !== undefined) note.example = example;
        parameterNotes[parameter.name] = note;
        return row;
      });
      for (const match of pathTemplate.matchAll(/\{([^}]+)\}/g)) {
        const name = match[1] as string;
        if (parameters.some((p) => p.name === name && p.in === 'path')) continue;
        undeclaredPathParameters.push(`${id}:${name}`);
        parameters.push({ name, in: 'path', required: true, type: 'string' });
        parameterNotes[name] = { description: `the {${name}} of the path` };
      }
      const bodySchema = Object.values(operation.requestBody?.content ?? {})[0]?.schema;
      const body = bodySchema ? builder.shape(bodySchema) : undefined;
      const resolvedBody = bodySchema?.$ref
        ? spec.components.schemas[decodeURIComponent(bodySchema.$ref.replace('#/components/schemas/', ''))]
        : bodySchema;
      const bodyFields: BodyField[] = Object.entries(resolvedBody?.properties ?? {}).map(([name, schema]) => {
        const property = schema.$ref
          ? spec.components.schemas[decodeURIComponent(schema.$ref.replace('#/components/schemas/', ''))]
          : schema;
        const field: BodyField = {
          name,
          required: (resolvedBody?.required ?? []).includes(name),
          type: describeType(builder.shape(schema)),
        };
        const description = plain(schema.description ?? property?.description);
        if (description) field.description = description;
        const example = exampleOf(schema);
        if (example !== undefined) field.example = example;
        return field;
      });

      const answerSchema = operation.responses['200']?.content?.['application/json']?.schema;
      const answerObject = answerSchema?.$ref
        ? spec.components.schemas[decodeURIComponent(answerSchema.$ref.replace('#/components/schemas/', ''))]
        : answerSchema;
      const answerProps = answerObject?.properties ?? {};
      let answer: AnswerForm;
      let data: Shape;
      if ('status' in answerProps && 'data' in answerProps) {
        answer = 'envelope';
        data = builder.shape(answerProps['data']);
      } else if ('status' in answerProps) {
        // The envelope's fields and the answer side by side (landscape job status).
        answer = 'flat';
        data = builder.shape(answerObject);
      } else {
        answer = 'plain';
        data = builder.shape(answerObject);
      }

      const summary = plain(operation.summary, 120) ?? id;
      const row: OperationRow = {
        operationId: id,
        method: method.toUpperCase() as OperationRow['method'],
        path: pathTemplate,
        group: operation.tags?.[0] ?? 'Others',
        summary,
        requestContentType: contentType,
        bodyEncoding: bodyEncodingOf(contentType),
        effect: effectOf(id, method.toUpperCase(), summary),
        stream: contentType === 'text/event-stream',
        answer,
        parameters,
        bodyFields: bodyFields.map((field) => field.name),
      };
      details[id] = { parameters: parameterNotes, body: bodyFields };
      const shortId = shortIdOf(id);
      if (shortId) row.shortId = shortId;
      if (id in workflowCatalogue) row.workflow = true;
      const paging = pagingOf(parameters, bodyFields, data, builder);
      if (paging) row.paging = paging;
      rows.push(row);
      shapes[id] = body === undefined ? { data } : { body, data };
    }
  }
  const missing = KNOWN_MISSING_SCHEMAS.filter((name) => !builder.missingSeen.has(name));
  return {
    rows,
    details,
    shapes,
    definitions: builder.definitions,
    notes: {
      missingSchemasReplaced: [...builder.missingSeen],
      knownDefectsNotSeen: missing,
      eventStreamRequests: rows.filter((row) => row.stream).map((row) => row.operationId),
      undeclaredPathParameters,
    },
  };
}

function primitive(shape: Shape): OperationParameter['type'] {
  if (shape === 'integer' || shape === 'number' || shape === 'boolean') return shape;
  if (typeof shape === 'object' && 'array' in shape) return 'array';
  return 'string';
}

/** `string`, `integer[]`, `object`: how a listing names a field's type. */
function describeType(shape: Shape): string {
  if (typeof shape === 'string') return shape;
  if ('array' in shape) return `${describeType(shape.array)}[]`;
  return 'object';
}

/** Generated modules hold their data brotli-compressed (base64): small in every bundle, decoded once on first use. */
function pack(value: unknown): string {
  const json = JSON.stringify(value);
  return brotliCompressSync(Buffer.from(json, 'utf8'), {
    params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: json.length },
  }).toString('base64');
}

function render(spec: OpenApi, result: ReturnType<typeof generate>) {
  const banner = (what: string) =>
    [
      `// Generated by scripts/generate-catalogue.ts from "${spec.info.title}" ${spec.info.version}`,
      `// (${result.rows.length} operations). Do not edit: run \`npm run generate:catalogue\`.`,
      `// ${what}`,
      '// The data is JSON, brotli-compressed and base64-encoded (see ../unpack.ts); docs/operations.md lists it readably.',
      '',
    ].join('\n');
  const module = (what: string, name: string, value: unknown) =>
    [banner(what), `export const ${name} = ${JSON.stringify(pack(value))};`, ''].join('\n');
  return {
    'operations.ts': module(
      'Every operation (OperationRow[]): id, short id, method, path, group, summary, parameters, body fields, paging; and the generation notes.',
      'packedOperations',
      { rows: result.rows, notes: result.notes },
    ),
    'shapes.ts': module(
      'Request bodies and answer data as shapes ({definitions, operations}); operation-schemas.ts builds zod schemas from them.',
      'packedShapes',
      { definitions: result.definitions, operations: result.shapes },
    ),
    'details.ts': module(
      'Descriptions and examples of parameters and body fields (Record<operationId, OperationDetails>).',
      'packedDetails',
      result.details,
    ),
  };
}

/** docs/operations.md: the catalogue as a person reads it, by group. */
function renderMarkdown(spec: OpenApi, result: ReturnType<typeof generate>): string {
  const lines = [
    '# Open Platform operations',
    '',
    `Generated by \`npm run generate:catalogue\` from "${spec.info.title}" ${spec.info.version}: ${result.rows.length} operations.`,
    'Call any of them with `opflow call <operationId or short id>`, or as a job of the `call` workflow;',
    "`opflow operations <id>` shows an operation's parameters and fields.",
    '',
    'Defects of the description, and what opflow does about them:',
    '',
    `- Referenced but missing schemas, read as free-form objects: ${result.notes.missingSchemasReplaced.map((name) => `\`${name}\``).join(', ')}.`,
    `- Request content type declared as \`text/event-stream\` (sent as JSON; the answer is a stream): ${result.notes.eventStreamRequests.join(', ')}.`,
    `- Path parameters not declared, taken from the path template: ${result.notes.undeclaredPathParameters.join(', ')}.`,
    '',
  ];
  const groups = new Map<string, OperationRow[]>();
  for (const row of result.rows) groups.set(row.group, [...(groups.get(row.group) ?? []), row]);
  for (const [group, rows] of groups) {
    lines.push(
      `## ${group.trim()}`,
      '',
      '| operation | short id | method | path | summary | paged |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const row of rows) {
      const cells = [
        row.operationId,
        row.shortId ?? '',
        row.method,
        row.path,
        row.summary,
        row.paging ? row.paging.param : '',
      ];
      lines.push(`| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

function main() {
  const { reference, check } = parseArgs(process.argv.slice(2));
  if (!existsSync(reference)) {
    console.error(
      `generate-catalogue: the reference OpenAPI file is not at ${reference}. Give it with --reference <file> ` +
        'or OPFLOW_REFERENCE_OPENAPI; the checked-in catalogue is left as it is.',
    );
    process.exit(2);
  }
  const spec = JSON.parse(readFileSync(reference, 'utf8')) as OpenApi;
  const result = generate(spec);
  const files = render(spec, result);
  const markdown = renderMarkdown(spec, result);
  if (check) {
    // Compared by content, not bytes: another Node's brotli may pack the same data differently.
    const packedOf = (text: string) => unpack(/= "([^"]*)"/.exec(text)?.[1] ?? '');
    const stale = Object.entries(files).filter(([name, text]) => {
      const file = path.join(outDir, name);
      return (
        !existsSync(file) ||
        JSON.stringify(packedOf(readFileSync(file, 'utf8'))) !== JSON.stringify(packedOf(text))
      );
    });
    if (!existsSync(markdownFile) || readFileSync(markdownFile, 'utf8') !== markdown)
      stale.push(['docs/operations.md', '']);
    if (stale.length) {
      console.error(`generate-catalogue: out of date: ${stale.map(([name]) => name).join(', ')}`);
      process.exit(1);
    }
    console.log('generate-catalogue: the checked-in catalogue is up to date');
    return;
  }
  mkdirSync(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(outDir, name), text);
  writeFileSync(markdownFile, markdown);
  const sizes = Object.entries(files).map(([name, text]) => `${name} ${(text.length / 1024).toFixed(0)} KiB`);
  console.log(
    `generate-catalogue: ${result.rows.length} operations, ${Object.keys(result.definitions).length} shared shapes (${sizes.join(', ')})`,
  );
  console.log(
    `  missing schemas replaced by free-form objects: ${result.notes.missingSchemasReplaced.join(', ')}`,
  );
  console.log(`  event-stream request types (sent as JSON): ${result.notes.eventStreamRequests.join(', ')}`);
  console.log(`  path parameters taken from templates: ${result.notes.undeclaredPathParameters.join(', ')}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
