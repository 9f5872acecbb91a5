/**
 * The full catalogue against the platform's OpenAPI file, when the file is present (outside the repo:
 * `../shared/reference/open-platform-openapi.json` beside the repository or beside its worktrees, or
 * OPFLOW_REFERENCE_OPENAPI). Every operation of the file must be in the catalogue with the same
 * method, path, group, declared content type, parameters and body fields, and the checked-in
 * generated code must be what the generator makes of the file today.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { generate } from '../../../scripts/generate-catalogue';
import {
  allOperations,
  loadOperationDetails,
  loadOperationSchemas,
  loadShapeTables,
} from '../../../shared/openplatform';

const { definitions, operationShapes } = await loadShapeTables();
const operationDetails = await loadOperationDetails();

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const candidates = ['../shared', '../../shared'].map((dir) =>
  resolve(repoRoot, dir, 'reference/open-platform-openapi.json'),
);
const referencePath =
  process.env['OPFLOW_REFERENCE_OPENAPI'] ?? candidates.find((file) => existsSync(file)) ?? candidates[0];
const hasReference = referencePath !== undefined && existsSync(referencePath);

type Schema = { $ref?: string; properties?: Record<string, Schema>; required?: string[] };
type Operation = {
  operationId: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
};
type Spec = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

describe('full catalogue (no reference needed)', () => {
  it('has shapes and details for every operation', () => {
    for (const row of allOperations()) {
      expect(operationShapes[row.operationId], row.operationId).toBeDefined();
      expect(operationDetails[row.operationId], row.operationId).toBeDefined();
    }
    expect(Object.keys(definitions).length).toBeGreaterThan(100);
  });

  if (!hasReference) {
    it(`does not compare with the reference: ${referencePath} is absent`, () => {
      expect(hasReference).toBe(false);
    });
  }
});

const describeWithReference = hasReference
  ? describe
  : (((_name: string, _body: () => void) => undefined) as unknown as typeof describe);

describeWithReference('full catalogue against the reference OpenAPI file', () => {
  const spec = (hasReference ? JSON.parse(readFileSync(referencePath as string, 'utf8')) : {}) as Spec;
  const operations = Object.entries(spec.paths ?? {}).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
  const resolveSchema = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref
      ? spec.components.schemas[decodeURIComponent(schema.$ref.replace('#/components/schemas/', ''))]
      : schema;

  it('lists as many operations as the file', () => {
    expect(operations).toHaveLength(allOperations().length);
  });

  it.each(operations.map((entry) => [entry.operation.operationId, entry] as const))(
    '%s is in the catalogue with the same method, path, parameters and body',
    async (id, { path, method, operation }) => {
      const row = allOperations().find((candidate) => candidate.operationId === id);
      expect(row, `${id} is in the catalogue`).toBeDefined();
      if (!row) return;
      expect([row.method, row.path, row.group]).toEqual([method, path, operation.tags?.[0]]);
      expect(row.requestContentType).toBe(Object.keys(operation.requestBody?.content ?? {})[0] ?? 'none');
      const declared = (operation.parameters ?? []).map((p) => `${p.in}:${p.name}:${p.required === true}`);
      const ours = row.parameters
        .filter((p) => p.in !== 'path')
        .map((p) => `${p.in}:${p.name}:${p.required}`);
      expect(ours.sort()).toEqual(declared.sort());
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      expect(row.parameters.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(templated);
      const body = resolveSchema(Object.values(operation.requestBody?.content ?? {})[0]?.schema);
      expect([...row.bodyFields].sort()).toEqual(Object.keys(body?.properties ?? {}).sort());
      if (row.workflow || !body) return;
      // The zod schema the client checks bodies with says the same fields and required fields.
      const schemas = await loadOperationSchemas(row);
      const json = z.toJSONSchema(schemas.body as z.ZodType, {
        io: 'input',
        unrepresentable: 'any',
      }) as Schema;
      expect(Object.keys(json.properties ?? {}).sort()).toEqual(Object.keys(body.properties ?? {}).sort());
      expect([...(json.required ?? [])].sort()).toEqual([...(body.required ?? [])].sort());
    },
  );

  it('is what the generator makes of the file today (regenerate with npm run generate:catalogue)', () => {
    const fresh = generate(spec as never);
    expect(fresh.rows).toEqual(allOperations());
    expect(fresh.shapes).toEqual(operationShapes);
    expect(fresh.definitions).toEqual(definitions);
    expect(fresh.details).toEqual(operationDetails);
  });
});
