/**
 * Builds docs/reference/configuration.md, every setting of opflow with its default, from the
 * configuration sources themselves: the local runtime's flags and variables and the aws runtime's
 * variables (shared/runtime/{local,aws}/config.ts), the other variables the code reads, the
 * schema of opflow.config.json (shared/config/) and the CDK stage settings (infra/config.ts).
 * Descriptions are the TSDoc comments beside each setting; defaults and bounds come from the zod
 * schemas (as JSON Schema where the schema is exported, from its source text where it is not).
 *
 *   npx tsx scripts/generate-config-reference.ts           # write the file
 *   npx tsx scripts/generate-config-reference.ts --check   # exit 1 when the file is stale
 *
 * test/unit/config/configuration-reference.test.ts fails when the checked-in file is stale.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as z from 'zod';
import { stageConfigSchema, stageDefaults } from '../infra/config';
import { opflowConfigSchema } from '../shared/config/opflow-config';
import { awsConfigSources } from '../shared/runtime/aws/config';
import { automationVariables } from '../shared/runtime/lambda/automation';
import { localConfigSources } from '../shared/runtime/local/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const referencePath = 'docs/reference/configuration.md';

const read = (file: string) => readFileSync(resolve(root, file), 'utf8');
const parse = (file: string) => ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);

/** A table cell: one line, pipes escaped. */
const cell = (text: string | undefined) => (text ?? '').replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
const code = (text: string | undefined) => (text === undefined || text === '' ? '' : `\`${text}\``);

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The TSDoc text of a node, whitespace collapsed; '' without one. */
function docOf(node: ts.Node): string {
  return ts
    .getJSDocCommentsAndTags(node)
    .filter(ts.isJSDoc)
    .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The name of a property assignment or signature, unquoted. */
function propertyName(node: ts.PropertyAssignment | ts.PropertySignature, source: ts.SourceFile): string {
  return node.name.getText(source).replace(/^['"]|['"]$/g, '');
}

/**
 * The TSDoc of every property (of an interface, a type or an object literal) of the files, by its
 * dotted path of enclosing property names (`worker.batchSize`) and by its name alone. With a
 * `declaration`, only the properties inside that variable's initializer.
 */
function propertyDocs(files: string[], declaration?: string): Map<string, string> {
  const docs = new Map<string, string>();
  for (const file of files) {
    const source = parse(file);
    const visit = (node: ts.Node, path: string[]) => {
      if (declaration && ts.isVariableDeclaration(node) && node.name.getText(source) !== declaration) return;
      let inner = path;
      if (ts.isPropertyAssignment(node) || ts.isPropertySignature(node)) {
        inner = [...path, propertyName(node, source)];
        const doc = docOf(node);
        if (doc) {
          docs.set(inner.join('.'), doc);
          if (!docs.has(inner.at(-1)!)) docs.set(inner.at(-1)!, doc);
        }
      }
      ts.forEachChild(node, (child) => visit(child, inner));
    };
    visit(source, []);
  }
  return docs;
}

/** The doc of `a.b.c`: its whole path, else its path without leading parts, else its name alone. */
function lookup(docs: Map<string, string>, path: string[]): string {
  const names = path.filter((part) => part !== '*');
  for (let start = 0; start < names.length; start++) {
    const doc = docs.get(names.slice(start).join('.'));
    if (doc) return doc;
  }
  return '';
}

/** The initializer text of each property of the object literal a `const` of the file is set to. */
function objectLiteralTexts(file: string, constName: string): Map<string, string> {
  const source = parse(file);
  const found = new Map<string, string>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === constName && node.initializer) {
      let value: ts.Expression = node.initializer;
      while (ts.isSatisfiesExpression(value) || ts.isAsExpression(value)) value = value.expression;
      if (ts.isObjectLiteralExpression(value)) {
        for (const property of value.properties) {
          if (ts.isPropertyAssignment(property))
            found.set(propertyName(property, source), property.initializer.getText(source));
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (found.size === 0) throw new Error(`${file}: no object literal const ${constName}`);
  return found;
}

/** Default and bounds read from a zod schema's source text (`.default(5)`, `.min(1, ...)`, `z.enum([...])`). */
function fromSchemaText(text: string | undefined): { default: string; allowed: string } {
  if (!text) return { default: '', allowed: '' };
  const flat = text.replace(/\s+/g, ' ');
  const defaults = [...flat.matchAll(/\.default\(([^()]*)\)/g)];
  const bounds: string[] = [];
  const enumValues = /z\.enum\(\[([^\]]*)\]/.exec(flat)?.[1];
  if (enumValues) bounds.push(enumValues.replace(/'/g, '').replace(/\s*,\s*/g, ', '));
  if (/z\.url\(/.test(flat)) bounds.push('an http(s) URL');
  if (/\.int\(/.test(flat)) bounds.push('whole number');
  if (/\.positive\(/.test(flat)) bounds.push('> 0');
  const min = [...flat.matchAll(/\.min\((-?[\d_.]+)/g)].at(-1)?.[1];
  const max = [...flat.matchAll(/\.max\((-?[\d_.]+)/g)].at(-1)?.[1];
  if (min !== undefined && !/\.string\(\)[^.]*\.trim\(\)\.min\(1/.test(flat) && !/required/.test(flat))
    bounds.push(`≥ ${min.replace(/_/g, '')}`);
  if (max !== undefined) bounds.push(`≤ ${max.replace(/_/g, '')}`);
  if (/^required\b/.test(flat)) bounds.push('required');
  const value = defaults.at(-1)?.[1]?.trim();
  return { default: value === undefined ? '' : value.replace(/^'(.*)'$/, '$1'), allowed: bounds.join(', ') };
}

/** The first comment of a file (what it is for): its paragraphs, each bullet of a list on a line of its own. */
function headerOf(file: string): string {
  const comment = /^\/\*\*([\s\S]*?)\*\//.exec(read(file))?.[1] ?? '';
  const lines = comment.split('\n').map((line) => line.replace(/^\s*\* ?/, ''));
  return lines
    .join('\n')
    .trim()
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\n(?!- )\s*/g, ' '))
    .join('\n\n');
}

function localRuntimeSection(): string {
  const file = 'shared/runtime/local/config.ts';
  const schemas = objectLiteralTexts(file, 'fieldSchemas');
  const docs = propertyDocs([file]);
  const rows = Object.entries(localConfigSources).map(([key, source]) => {
    const { default: value, allowed } = fromSchemaText(schemas.get(key));
    return [code(source.env), code(source.flag ?? undefined), code(value), allowed, lookup(docs, [key])];
  });
  return [
    '## The local runtime: flags and environment',
    `From \`${file}\`: ${headerOf(file)}`,
    table(['variable', 'flag', 'default', 'allowed', 'what it is'], rows),
  ].join('\n\n');
}

function awsRuntimeSection(): string {
  const file = 'shared/runtime/aws/config.ts';
  const schemas = objectLiteralTexts(file, 'fieldSchemas');
  const endpoints = objectLiteralTexts(file, 'serviceEndpointVariables');
  const docs = propertyDocs([
    file,
    'shared/backends/aws/create-aws-backend.ts',
    'shared/backends/aws/clients.ts',
  ]);
  const rows = Object.entries(awsConfigSources).map(([key, variable]) => {
    const { default: value, allowed } = fromSchemaText(schemas.get(key));
    return [code(variable), code(value), allowed, lookup(docs, [key])];
  });
  for (const [service, variable] of endpoints) {
    rows.push([
      code(variable.replace(/'/g, '')),
      '',
      'an http(s) URL',
      `The ${service} endpoint; wins over AWS_ENDPOINT_URL.`,
    ]);
  }
  return [
    '## The aws runtime: environment',
    `From \`${file}\`: ${headerOf(file)}`,
    table(['variable', 'default', 'allowed', 'what it is'], rows),
    `The functions that handle webhooks, callbacks and schedules also read ${automationVariables.map(code).join(', ')}, which the stack sets (\`shared/runtime/lambda/automation.ts\`).`,
  ].join('\n\n');
}

/** Every `OPFLOW_*` variable the code names (a string, a property of `env`, a template's start), with the files. */
function variablesRead(): Map<string, Set<string>> {
  const files = execFileSync(
    'git',
    ['ls-files', '--', 'shared/*.ts', 'functions/*.ts', 'infra/*.ts', 'bin/*.js'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((file) => file !== '' && !file.includes('/generated/'));
  const found = new Map<string, Set<string>>();
  const note = (name: string, file: string) => {
    if (!/^OPFLOW_[A-Z0-9_]*[A-Z0-9]_?$/.test(name) || name === 'OPFLOW_') return;
    const shown = name.endsWith('_') ? `${name}<NAME>` : name;
    if (!found.has(shown)) found.set(shown, new Set());
    found.get(shown)!.add(file);
  };
  for (const file of files) {
    const source = parse(file);
    const visit = (node: ts.Node) => {
      if (ts.isStringLiteralLike(node)) note(node.text, file);
      else if (ts.isTemplateHead(node)) note(node.text, file);
      else if (ts.isPropertyAccessExpression(node)) note(node.name.text, file);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function otherVariablesSection(): string {
  const covered = new Set<string>([
    ...Object.values(localConfigSources).map((source) => source.env),
    ...Object.values(awsConfigSources),
    ...automationVariables,
  ]);
  const rows = [...variablesRead()]
    .filter(([name]) => !covered.has(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, files]) => [code(name), [...files].sort().map(code).join(', ')]);
  return [
    '## Other variables',
    'Every other `OPFLOW_*` variable the code reads, with the files that read it. `<NAME>` stands for a tenant or a source, upper-cased (`OPFLOW_API_KEY_ACME`). The guides describe each: the [CLI](../guides/cli.md), [callbacks](../guides/callbacks.md), [schedules and webhooks](../guides/schedules-and-webhooks.md), [MCP](../guides/mcp.md), [bulk ingestion](../guides/bulk-ingestion.md).',
    table(['variable', 'read in'], rows),
  ].join('\n\n');
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  required?: string[];
};

/** What a schema allows, in a few words. */
function allowedOf(schema: JsonSchema): string {
  const parts: string[] = [];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants)
    return variants
      .map(allowedOf)
      .filter((text) => text !== '')
      .join(' or ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(', ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : schema.type;
  if (type === 'array') parts.push(`list${schema.items ? ` of ${allowedOf(schema.items) || 'values'}` : ''}`);
  else if (type) parts.push(type === 'integer' ? 'whole number' : type);
  if (schema.format) parts.push(schema.format);
  // zod's whole numbers carry the safe-integer range, which says nothing to a reader.
  const bound = (value: number | undefined) =>
    value !== undefined && Math.abs(value) !== Number.MAX_SAFE_INTEGER;
  if (bound(schema.minimum)) parts.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (bound(schema.maximum)) parts.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined && schema.minLength > 1) parts.push(`≥ ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) parts.push(`≤ ${schema.maxLength} characters`);
  if (schema.minItems !== undefined && schema.minItems > 0) parts.push(`≥ ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`≤ ${schema.maxItems} items`);
  if (schema.pattern && !schema.format) parts.push(`matching \`${schema.pattern}\``);
  return parts.join(', ');
}

interface Leaf {
  path: string[];
  schema: JsonSchema;
  required: boolean;
}

/**
 * The settings of a JSON Schema object, depth first: a nested object's fields, a map's values and a
 * list's items as `*`. A union of objects (a discriminated union) lists its variants' fields; a union
 * with anything else (a value or a template object) is one setting.
 */
function leavesOf(schema: JsonSchema, path: string[] = [], required = true): Leaf[] {
  const variants = schema.anyOf ?? schema.oneOf;
  const objectVariants = variants?.every((variant) => variant.properties) ? variants : undefined;
  if (objectVariants && objectVariants.length > 0) {
    const seen = new Map<string, Leaf>();
    for (const variant of objectVariants) {
      for (const leaf of leavesOf(variant, path, required)) {
        const key = leaf.path.join('.');
        const before = seen.get(key);
        seen.set(key, before ? { ...before, schema: { anyOf: [before.schema, leaf.schema] } } : leaf);
      }
    }
    return [...seen.values()];
  }
  if (schema.properties) {
    return Object.entries(schema.properties).flatMap(([name, child]) =>
      leavesOf(child, [...path, name], schema.required?.includes(name) ?? false),
    );
  }
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties.properties) {
    return leavesOf(schema.additionalProperties, [...path, '*'], required);
  }
  if (schema.type === 'array' && schema.items?.properties) {
    return leavesOf(schema.items, [...path, '*'], required);
  }
  return [{ path, schema, required }];
}

const jsonSchemaOf = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as unknown as JsonSchema;

/** The schema each top-level field of opflow.config.json is declared by, so a field's doc is its own schema's. */
const configFileDeclarations: Record<string, string> = {
  webhooks: 'webhookSourceSchema',
  schedules: 'scheduleSchema',
};

function configFileSection(): string {
  const files = ['shared/config/opflow-config.ts', 'shared/config/disclosure-form-config.ts'];
  const docs = propertyDocs(files);
  const docsOf = Object.fromEntries(
    Object.entries(configFileDeclarations).map(([field, declaration]) => [
      field,
      propertyDocs(files, declaration),
    ]),
  );
  const rows = leavesOf(jsonSchemaOf(opflowConfigSchema)).map((leaf) => [
    code(leaf.path.join('.')),
    leaf.required ? 'yes' : '',
    code(leaf.schema.default === undefined ? undefined : JSON.stringify(leaf.schema.default)),
    allowedOf(leaf.schema),
    lookup(docsOf[leaf.path[0]!] ?? docs, leaf.path),
  ]);
  return [
    '## opflow.config.json',
    "From `shared/config/opflow-config.ts`. The file is `opflow.config.json` in the current folder, or the one `--config` or `OPFLOW_CONFIG` names. `*` stands for a webhook source's name or a schedule's place in the list. The [schedules and webhooks guide](../guides/schedules-and-webhooks.md) explains each field, and the [disclosure forms guide](../guides/disclosure-forms.md) the disclosure form.",
    table(['field', 'required', 'default', 'allowed', 'what it is'], rows),
  ].join('\n\n');
}

function valueAt(value: unknown, path: string[]): string {
  let current: unknown = value;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return '';
    current = (current as Record<string, unknown>)[part];
  }
  return current === undefined ? '' : code(JSON.stringify(current));
}

function stageSection(): string {
  const docs = propertyDocs([
    'infra/config.ts',
    'shared/runtime/lambda/api-auth.ts',
    'infra/lib/function-tracing.ts',
  ]);
  const stages = Object.keys(stageDefaults) as (keyof typeof stageDefaults)[];
  const rows = leavesOf(jsonSchemaOf(stageConfigSchema)).map((leaf) => [
    code(leaf.path.join('.')),
    ...stages.map((stage) => valueAt(stageDefaults[stage], leaf.path)),
    allowedOf(leaf.schema),
    lookup(docs, leaf.path),
  ]);
  return [
    '## CDK stage settings',
    'From `infra/config.ts` (`stageConfigSchema`, with the values of `stageDefaults`). `cdk deploy -c stage=<name>` picks a stage; the [deploy guide](../guides/deploy.md#configure-a-stage) says how to change a setting. Synthesis stops on a value outside what is allowed, naming the field.',
    table(['setting', ...stages, 'allowed', 'what it is'], rows),
  ].join('\n\n');
}

/** The whole reference, as written to docs/reference/configuration.md. */
export function buildConfigurationReference(): string {
  return `${[
    '# Configuration reference',
    '<!-- Generated by scripts/generate-config-reference.ts from the configuration sources; do not edit. -->',
    'Every setting of opflow, generated from the schemas that validate it. A value outside what is allowed stops the command, the function or the synthesis with a message that names the setting.',
    localRuntimeSection(),
    awsRuntimeSection(),
    otherVariablesSection(),
    configFileSection(),
    stageSection(),
  ].join('\n\n')}\n`;
}

function main(argv: string[]): void {
  const target = resolve(root, referencePath);
  const text = buildConfigurationReference();
  if (argv.includes('--check')) {
    const current = readFileSync(target, 'utf8');
    if (current !== text) {
      process.stderr.write(`${referencePath} is stale: run npx tsx scripts/generate-config-reference.ts\n`);
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(target, text);
  process.stdout.write(`wrote ${referencePath} (${Buffer.byteLength(text)} bytes)\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
