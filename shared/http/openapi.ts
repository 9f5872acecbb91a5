/**
 * The job API described in OpenAPI 3.1, served at `GET /openapi.json`: built from the route table
 * (routes.ts), with the zod schemas the routes validate requests with (request-schemas.ts) and the
 * answer schemas the tests hold every route's real answers to (answer-schemas.ts), so the
 * description cannot drift from the routes without a test failing.
 */

import * as z from 'zod';
import { answerSchemas } from './answer-schemas';
import { parameterNames, type RouteAnswer, type RouteSpec, routeTable } from './routes';

export { answerSchemas, errorAnswerSchema, type JobView, jobViewSchema } from './answer-schemas';

type Schema = z.ZodType;
type Json = Record<string, unknown>;

const toSchema = (schema: Schema, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as Json;

function strip(schema: Json): Json {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}

const refusalDescriptions: Record<number, string> = {
  400: 'invalid request (what is wrong and where)',
  401: 'not authenticated',
  403: 'another tenant',
  404: 'no such job',
  409: "conflicts with the job's status or an earlier request with its Idempotency-Key",
  413: 'body too large',
  415: 'not JSON',
  429: 'too many',
};

function answerOf(answer: RouteAnswer): Json {
  if ('media' in answer) {
    return {
      description: answer.description,
      content: Object.fromEntries(answer.media.map((type) => [type, {}])),
    };
  }
  return {
    description: answer.description,
    content: { 'application/json': { schema: strip(toSchema(answerSchemas[answer.schema], 'output')) } },
  };
}

function responsesOf(route: RouteSpec): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(route.answers)) responses[status] = answerOf(answer);
  for (const status of route.refusals) {
    responses[String(status)] = answerOf({
      description: refusalDescriptions[status] ?? 'refused',
      schema: 'error',
    });
  }
  return responses;
}

function parametersOf(route: RouteSpec): Json[] {
  const path = parameterNames(route).map((name) => {
    const schema = route.params?.[name];
    return {
      name,
      in: 'path',
      required: true,
      schema: schema ? strip(toSchema(schema, 'input')) : { type: 'string' },
    };
  });
  const headers = Object.entries(route.headers ?? {}).map(([name, schema]) => ({
    name,
    in: 'header',
    required: false,
    schema: strip(toSchema(schema, 'input')),
  }));
  const query = route.query ? queryParameters(route.query.schema, route.query.descriptions) : [];
  return [...path, ...headers, ...query];
}

function queryParameters(schema: z.ZodObject, descriptions: Readonly<Record<string, string>>): Json[] {
  const json = toSchema(schema, 'input') as { properties: Json; required?: string[] };
  return Object.entries(json.properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    description: descriptions[name],
    schema: property,
  }));
}

function requestBodyOf(body: NonNullable<RouteSpec['body']>): Json {
  if ('media' in body) {
    return { required: true, content: Object.fromEntries(body.media.map((type) => [type, {}])) };
  }
  return {
    required: body.required,
    content: { 'application/json': { schema: strip(toSchema(body.schema, 'input')) } },
  };
}

/** One operation of the description. */
function operationOf(route: RouteSpec): Json {
  const parameters = parametersOf(route);
  return {
    operationId: route.operationId,
    summary: route.servedBy === 'serve' ? `${route.summary} (opflow serve only)` : route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(route.auth === 'caller' ? {} : { security: [] }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(route.body === undefined ? {} : { requestBody: requestBodyOf(route.body) }),
    responses: responsesOf(route),
  };
}

let cached: Json | undefined;

/** The OpenAPI 3.1 document of the job API (built once, on first use). */
export function jobApiOpenApi(): Json {
  cached ??= withSharedSchemas(describeRoutes(routeTable));
  return cached;
}

/** The document of the routes given. */
export function describeRoutes(routes: readonly RouteSpec[]): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'opflow job API',
      version: '1',
      description:
        'Jobs that run the Open Platform workflows. Served by `opflow serve` (local) and by the AWS stack (HTTP API + Lambda); the same routes and JSON. Every time is ISO 8601 (UTC). Every refusal is a JSON error with what is wrong and where.',
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'opflow serve with OPFLOW_SERVE_TOKEN; on AWS a JWT or IAM (SigV4) per the stage',
        },
      },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

const componentRef = '#/components/schemas/';

/**
 * zod writes a schema that carries an id (`.meta({ id: 'Job' })`) into a `$defs` of each schema it
 * converts, referenced as `#/$defs/Job`. Inside an OpenAPI document such a reference resolves
 * against the document, where no `$defs` exists, so validators and generators (openapi-typescript,
 * swagger-parser) refuse it. Every such definition moves once to `components.schemas` and every
 * reference points there. Two different definitions under one id are a bug: refused here.
 */
function withSharedSchemas(doc: Json): Json {
  const shared: Json = {};
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (node === null || typeof node !== 'object') return node;
    const { $defs, ...rest } = node as Json;
    if ($defs !== undefined) {
      for (const [id, definition] of Object.entries($defs as Json)) {
        const moved = hoist(definition);
        if (id in shared && JSON.stringify(shared[id]) !== JSON.stringify(moved)) {
          throw new Error(`OpenAPI: two different schemas are named ${id}`);
        }
        shared[id] = moved;
      }
    }
    return Object.fromEntries(
      Object.entries(rest).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')
          ? componentRef + value.slice('#/$defs/'.length)
          : hoist(value),
      ]),
    );
  };
  const hoisted = hoist(doc) as Json & { components: Json };
  const names = Object.keys(shared).sort();
  hoisted.components = {
    schemas: Object.fromEntries(names.map((name) => [name, shared[name]])),
    ...hoisted.components,
  };
  return hoisted;
}
