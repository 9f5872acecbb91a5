/**
 * Checks the catalogue, the request schemas (fields, types, enums, required fields and the character
 * limits stated in prose) and the answer data schemas against the platform's published OpenAPI file, when
 * that file is present (it lives outside the repo: `../shared/reference/open-platform-openapi.json`
 * from the repo root, or wherever OPFLOW_REFERENCE_OPENAPI points). Without it, only the checks that
 * need no reference run, and a test says the comparison was skipped and why.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  catalogue,
  type OperationEntry,
  operationIds,
  requestSchemas,
  responseDataSchemas,
} from '../../../shared/openplatform';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
// Beside the repository, or beside the folder of its worktrees.
const referenceCandidates = ['../shared', '../../shared'].map((dir) =>
  resolve(repoRoot, dir, 'reference/open-platform-openapi.json'),
);
const referencePath =
  process.env['OPFLOW_REFERENCE_OPENAPI'] ??
  referenceCandidates.find((file) => existsSync(file)) ??
  (referenceCandidates[0] as string);
const hasReference = existsSync(referencePath);

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  description?: string;
  maxLength?: number;
};

/** A length limit the reference states only in prose, e.g. "No more than 500 character". */
const characterLimitIn = (description: string | undefined): number | undefined => {
  const match = description?.match(
    /(?:no more than|maximum length|length limit|at most|maximum of)\s*([\d,]+)\s*characters?/i,
  );
  return match?.[1] === undefined ? undefined : Number(match[1].replace(/,/g, ''));
};
type OpenApiOperation = {
  operationId?: string;
  tags?: string[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  parameters?: { name: string; in: string; required?: boolean; schema?: JsonSchema }[];
};
type OpenApi = {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
};

const entries = operationIds.map((id) => catalogue[id] as OperationEntry);

describe('catalogue (no reference needed)', () => {
  it('has 65 operations on 65 unique paths, with unique short names', () => {
    expect(entries).toHaveLength(65);
    expect(new Set(entries.map((entry) => entry.path)).size).toBe(65);
    expect(new Set(entries.map((entry) => entry.ref)).size).toBe(65);
  });

  it('names each operation after its short name, and only the chat operations stream', () => {
    for (const entry of entries) {
      expect(entry.operationId.toLowerCase().startsWith(entry.ref.toLowerCase()), entry.operationId).toBe(
        true,
      );
      expect(entry.stream, entry.operationId).toBe(entry.requestContentType === 'text/event-stream');
    }
    expect(entries.filter((entry) => entry.method === 'GET').map((entry) => entry.operationId)).toEqual([
      'ai34-3QuickSearchReportQuery',
      'p011BasicPatentDataSimpleBibliography',
      'p041BasicPatentDataSimpleLegalStatus',
      'p014BasicPatentDataPatentFamily',
    ]);
  });

  // Defined only when the file is absent, so a run with the file reports no skipped test.
  if (!hasReference) {
    it(`does not compare with the reference: ${referencePath} is absent`, () => {
      expect(existsSync(referencePath)).toBe(false);
    });
  }
});

// Without the reference file this suite is not defined at all (rather than reported as skipped).
const describeWithReference = hasReference
  ? describe
  : (((_name: string, _body: () => void) => undefined) as unknown as typeof describe);

describeWithReference('catalogue and request schemas against the reference OpenAPI file', () => {
  const spec = (hasReference ? JSON.parse(readFileSync(referencePath, 'utf8')) : { paths: {} }) as OpenApi;

  const resolveRef = (schema: JsonSchema | undefined, seen = new Set<string>()): JsonSchema | undefined => {
    if (!schema?.$ref) return schema;
    if (seen.has(schema.$ref)) return {};
    const name = decodeURIComponent(schema.$ref.replace('#/components/schemas/', ''));
    return resolveRef(spec.components?.schemas?.[name] ?? {}, new Set([...seen, schema.$ref]));
  };

  /** What both sides call the type: string, integer, number, boolean, array or object. */
  const typeOf = (schema: JsonSchema | undefined): string | undefined => {
    if (!schema) return undefined;
    const types = Array.isArray(schema.type) ? schema.type.filter((type) => type !== 'null') : [schema.type];
    if (types[0] !== undefined) return types[0];
    if (schema.properties) return 'object';
    if (schema.items) return 'array';
    const variants = schema.anyOf ?? schema.oneOf ?? schema.allOf;
    return variants?.map(typeOf).find((type) => type !== undefined);
  };

  /** Differences between our schema and the reference's, as "path: what" lines. */
  const compare = (
    ours: JsonSchema | undefined,
    theirsRaw: JsonSchema | undefined,
    path: string,
  ): string[] => {
    const theirs = resolveRef(theirsRaw);
    if (!theirs) return [];
    const problems: string[] = [];
    const theirType = typeOf(theirs);
    const ourType = typeOf(ours);
    if (theirType !== undefined && ourType !== theirType) {
      problems.push(`${path}: type ${ourType ?? 'any'}, reference ${theirType}`);
      return problems;
    }
    const limit = characterLimitIn(theirs.description);
    if (limit !== undefined && ours?.maxLength !== limit) {
      problems.push(
        `${path}: maxLength ${ours?.maxLength ?? 'none'}, reference says at most ${limit} characters`,
      );
    }
    if (theirs.enum && ours?.enum) {
      const missing = theirs.enum.filter((value) => !ours.enum?.includes(value));
      if (missing.length) problems.push(`${path}: enum lacks ${missing.join(', ')}`);
    }
    if (theirType === 'object' && theirs.properties) {
      const ourNames = Object.keys(ours?.properties ?? {}).sort();
      const theirNames = Object.keys(theirs.properties).sort();
      if (ourNames.join() !== theirNames.join()) {
        problems.push(`${path}: properties [${ourNames}], reference [${theirNames}]`);
      }
      const ourRequired = [...(ours?.required ?? [])].sort();
      const theirRequired = [...(theirs.required ?? [])].sort();
      if (ourRequired.join() !== theirRequired.join()) {
        problems.push(`${path}: required [${ourRequired}], reference [${theirRequired}]`);
      }
      for (const name of theirNames) {
        if (ours?.properties?.[name]) {
          problems.push(...compare(ours.properties[name], theirs.properties[name], `${path}.${name}`));
        }
      }
    }
    if (theirType === 'array' && theirs.items) {
      problems.push(...compare(ours?.items, theirs.items, `${path}[]`));
    }
    return problems;
  };

  /** Our side of a nullable field: the variant that is not null. */
  const nonNull = (schema: JsonSchema | undefined): JsonSchema | undefined => {
    const variants = schema?.anyOf ?? schema?.oneOf;
    const inner = variants?.find((variant) => variant.type !== 'null');
    return inner ? nonNull(inner) : schema;
  };

  /**
   * Differences between our answer `data` schema and the reference's: field names and types, at
   * every depth (integer and number count as one: the answers are parsed leniently anyway).
   */
  const compareData = (ours: JsonSchema | undefined, theirsRaw: JsonSchema | undefined, path: string) => {
    const theirs = resolveRef(theirsRaw);
    const mine = nonNull(ours);
    if (!theirs) return [];
    const numeric = (type: string | undefined) => (type === 'integer' ? 'number' : type);
    const theirType = typeOf(theirs);
    const ourType = typeOf(mine);
    if (theirType !== undefined && numeric(ourType) !== numeric(theirType)) {
      return [`${path}: type ${ourType ?? 'any'}, reference ${theirType}`];
    }
    const problems: string[] = [];
    if (theirType === 'object' && theirs.properties) {
      const ourNames = Object.keys(mine?.properties ?? {}).sort();
      const theirNames = Object.keys(theirs.properties).sort();
      if (ourNames.join() !== theirNames.join()) {
        problems.push(`${path}: properties [${ourNames}], reference [${theirNames}]`);
      }
      for (const name of theirNames) {
        if (mine?.properties?.[name]) {
          problems.push(...compareData(mine.properties[name], theirs.properties[name], `${path}.${name}`));
        }
      }
    }
    if (theirType === 'array' && theirs.items)
      problems.push(...compareData(mine?.items, theirs.items, `${path}[]`));
    return problems;
  };

  const referenceOf = (entry: OperationEntry) => spec.paths[entry.path]?.[entry.method.toLowerCase()];

  it.each(entries.map((entry) => [entry.operationId, entry] as const))(
    '%s matches its catalogue row',
    (_id, entry) => {
      const operation = referenceOf(entry);
      expect(operation, `${entry.method} ${entry.path} is in the reference`).toBeDefined();
      expect(operation?.operationId).toBe(entry.operationId);
      expect(operation?.tags?.[0]).toBe(entry.group);
      const declared = Object.keys(operation?.requestBody?.content ?? {})[0] ?? 'none';
      expect(declared).toBe(entry.requestContentType);
    },
  );

  it.each(entries.map((entry) => [entry.operationId, entry] as const))(
    '%s request schema matches',
    (_id, entry) => {
      const operation = referenceOf(entry);
      const ours = z.toJSONSchema(requestSchemas[entry.operationId as keyof typeof requestSchemas], {
        io: 'input',
        unrepresentable: 'any',
      }) as JsonSchema;
      let theirs: JsonSchema | undefined;
      if (entry.method === 'GET') {
        const parameters = (operation?.parameters ?? []).filter((parameter) => parameter.in === 'query');
        theirs = {
          type: 'object',
          properties: Object.fromEntries(
            parameters.map((parameter) => [parameter.name, parameter.schema ?? {}]),
          ),
          required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
        };
      } else {
        theirs = Object.values(operation?.requestBody?.content ?? {})[0]?.schema;
      }
      expect(compare(ours, theirs, 'body')).toEqual([]);
    },
  );

  it.each(entries.map((entry) => [entry.operationId, entry] as const))(
    '%s answer data schema matches',
    (_id, entry) => {
      const answer = referenceOf(entry)?.responses?.['200']?.content;
      const envelope = resolveRef(Object.values(answer ?? {})[0]?.schema);
      expect(envelope?.properties?.['data'], 'the reference describes the answer data').toBeDefined();
      const ours = z.toJSONSchema(
        responseDataSchemas[entry.operationId as keyof typeof responseDataSchemas],
        {
          io: 'input',
          unrepresentable: 'any',
        },
      ) as JsonSchema;
      expect(compareData(ours, envelope?.properties?.['data'], 'data')).toEqual([]);
    },
  );

  it('finds the character limits the reference states in prose', () => {
    const limited = entries.flatMap((entry) => {
      const schema = resolveRef(Object.values(referenceOf(entry)?.requestBody?.content ?? {})[0]?.schema);
      return Object.entries(schema?.properties ?? {})
        .filter(([, property]) => characterLimitIn(resolveRef(property)?.description) !== undefined)
        .map(([name]) => `${entry.ref}.${name}`);
    });
    // The checks above compare each of these with the schema's maxLength.
    expect(limited.sort()).toEqual([
      'ai07.prompt',
      'ai20.query',
      'ai33-1.solution_issues',
      'ai50.query',
      'p001.query_text',
    ]);
  });

  it('uses the Patsnap LLM tag for the three LLM chat operations', () => {
    const llm = entries.filter((entry) => entry.group === 'Patsnap LLM').map((entry) => entry.ref);
    expect(llm.sort()).toEqual(['ai07', 'ai20', 'ai50']);
  });
});
