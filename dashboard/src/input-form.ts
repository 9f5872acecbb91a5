/**
 * A workflow's input form, derived from its input schema (the JSON Schema `opflow workflows <name>`
 * prints): one field per property with its kind, limits and default, the values the person typed
 * checked against the same limits before anything is sent, and the values turned back into input.
 * A field of product images (`{url}` or `{data, name}` each) is a field of its own kind: image files
 * and URLs (image-field.tsx), its value the images as JSON.
 */
import { type ImageInput, largestImageAsData } from './image-input';
import type { Settings } from './types';

export type WorkflowDoc = NonNullable<Settings['workflowDocs']>[number];

/** The part of JSON Schema the input schemas use. */
export interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  items?: PropertySchema;
  properties?: Record<string, PropertySchema>;
  anyOf?: PropertySchema[];
  description?: string;
}

export type FieldKind = 'text' | 'longtext' | 'choice' | 'flag' | 'number' | 'list' | 'json' | 'images';

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  choices: string[];
  schema: PropertySchema;
  /** Common names that mean this field too (`text` for `problem`): an input may use them. */
  alsoAs: string[];
  /** The notes shown under the field: required or optional, default, limits. */
  hint: string;
}

const typesOf = (schema: PropertySchema): string[] =>
  Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];

/** An image as the design workflows take it: an object of `url`, `data` and `name`. */
const isImageSchema = (schema: PropertySchema | undefined) =>
  schema?.properties?.url !== undefined && schema.properties.data !== undefined;

/** Whether an images field takes a list (`images`) rather than one image (`image`). */
export const takesManyImages = (field: FormField) => typesOf(field.schema).includes('array');

function kindOf(name: string, schema: PropertySchema, doc: WorkflowDoc): FieldKind {
  if (isImageSchema(schema) || isImageSchema(schema.items)) return 'images';
  if (schema.enum?.every((value) => typeof value === 'string')) return 'choice';
  const types = typesOf(schema);
  if (types.length === 1 && types[0] === 'boolean') return 'flag';
  if (types.length === 1 && (types[0] === 'integer' || types[0] === 'number')) return 'number';
  if (types.length === 1 && types[0] === 'array' && typesOf(schema.items ?? {}).includes('string'))
    return 'list';
  if (types.length === 1 && types[0] === 'string')
    return name === doc.mainField || (schema.maxLength !== undefined && schema.maxLength > 500)
      ? 'longtext'
      : 'text';
  return 'json';
}

/** The fields of a workflow's form, the main field first. */
export function formFields(doc: WorkflowDoc): FormField[] {
  const schema = doc.inputSchema as { properties?: Record<string, PropertySchema>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const described = new Map(doc.fields.map((field) => [field.name, field]));
  const fields = Object.entries(schema.properties ?? {}).map(([name, property]): FormField => {
    const field = described.get(name);
    const notes = [
      required.has(name) ? 'required' : 'optional',
      ...(property.default !== undefined ? [`default ${JSON.stringify(property.default)}`] : []),
      ...(field?.limits ?? []),
      ...(field && field.alsoAs.length > 0 ? [`also accepted as "${field.alsoAs.join('", "')}"`] : []),
    ];
    const kind = kindOf(name, property, doc);
    return {
      name,
      kind,
      required: required.has(name),
      choices: kind === 'choice' ? (property.enum as string[]) : [],
      schema: property,
      alsoAs: field?.alsoAs ?? [],
      hint: [
        ...notes,
        ...(kind === 'list' ? ['one a line'] : []),
        ...(kind === 'json' ? ['as JSON'] : []),
        ...(kind === 'images'
          ? [
              `PNG or JPEG: files of at most ${largestImageAsData / 1024} KB from this page, or URLs of images up to 4,096 KB`,
            ]
          : []),
      ].join('; '),
    };
  });
  return fields.sort((a, b) => Number(b.name === doc.mainField) - Number(a.name === doc.mainField));
}

/** What the form holds: text per field (a flag as "true"/"false"). */
export type FormValues = Record<string, string>;

/** The form's values for an input: the input's own, else the defaults (a flag's default, a choice's). */
export function valuesOf(fields: FormField[], input: Record<string, unknown> = {}): FormValues {
  const values: FormValues = {};
  for (const field of fields) {
    const given = [field.name, ...field.alsoAs]
      .map((name) => input[name])
      .find((value) => value !== undefined);
    const value = given ?? field.schema.default;
    if (value === undefined) values[field.name] = field.kind === 'flag' ? 'false' : '';
    else if (field.kind === 'list' && Array.isArray(value)) values[field.name] = value.join('\n');
    else if (field.kind === 'images')
      values[field.name] = JSON.stringify(Array.isArray(value) ? value : [value]);
    else if (field.kind === 'json') values[field.name] = JSON.stringify(value, null, 2);
    else values[field.name] = String(value);
  }
  return values;
}

/**
 * The input the values make and what is wrong with each field, by name (empty when nothing is):
 * the same limits the server holds the input to, so a refusal is rare and names the field too.
 */
export function inputOf(
  fields: FormField[],
  values: FormValues,
): { input: Record<string, unknown>; problems: Record<string, string> } {
  const input: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const raw = values[field.name] ?? '';
    const text = field.kind === 'longtext' ? raw : raw.trim();
    const { schema } = field;
    if (field.kind === 'flag') {
      // A flag left at its default is left out, as a person running the CLI would.
      const on = raw === 'true';
      if (schema.default === undefined ? on : on !== schema.default) input[field.name] = on;
      continue;
    }
    if (field.kind === 'images') {
      const images = imagesOf(raw);
      const problem = imagesProblem(field, images.length);
      if (problem) problems[field.name] = problem;
      else if (images.length > 0) input[field.name] = takesManyImages(field) ? images : images[0];
      continue;
    }
    if (text.trim() === '') {
      if (field.required) problems[field.name] = 'is required';
      continue;
    }
    switch (field.kind) {
      case 'number': {
        const number = Number(text);
        if (!Number.isFinite(number)) problems[field.name] = 'must be a number';
        else if (typesOf(schema).includes('integer') && !Number.isInteger(number))
          problems[field.name] = 'must be a whole number';
        else if (schema.minimum !== undefined && number < schema.minimum)
          problems[field.name] = `must be at least ${schema.minimum}`;
        else if (schema.maximum !== undefined && number > schema.maximum)
          problems[field.name] = `must be at most ${schema.maximum}`;
        else input[field.name] = number;
        break;
      }
      case 'list': {
        const items = text
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean);
        if (schema.minItems !== undefined && items.length < schema.minItems)
          problems[field.name] = `needs at least ${schema.minItems} lines`;
        else if (schema.maxItems !== undefined && items.length > schema.maxItems)
          problems[field.name] = `takes at most ${schema.maxItems} lines`;
        else input[field.name] = items;
        break;
      }
      case 'json':
        try {
          input[field.name] = JSON.parse(text);
        } catch {
          problems[field.name] = 'is not valid JSON';
        }
        break;
      default: {
        if (field.kind === 'choice' && !field.choices.includes(text))
          problems[field.name] = `must be one of ${field.choices.join(', ')}`;
        else if (schema.minLength !== undefined && text.length < schema.minLength)
          problems[field.name] =
            schema.minLength === 1 ? 'is required' : `needs at least ${schema.minLength} characters`;
        else if (schema.maxLength !== undefined && text.length > schema.maxLength)
          problems[field.name] = `takes at most ${schema.maxLength} characters (${text.length} now)`;
        else if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(text))
          problems[field.name] = `does not match ${schema.pattern}`;
        else input[field.name] = text;
      }
    }
  }
  return { input, problems };
}

/** The images an images field holds (its value is their JSON; none when empty). */
export function imagesOf(value: string): ImageInput[] {
  if (value.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? (parsed as ImageInput[]) : [];
  } catch {
    return [];
  }
}

/** What is wrong with the count of images of a field, or undefined. */
function imagesProblem(field: FormField, count: number): string | undefined {
  if (count === 0) return field.required ? 'is required: choose an image file or add its URL' : undefined;
  if (!takesManyImages(field)) return count > 1 ? 'takes one image' : undefined;
  const { minItems, maxItems } = field.schema;
  if (minItems !== undefined && count < minItems) return `needs at least ${minItems} images`;
  if (maxItems !== undefined && count > maxItems) return `takes at most ${maxItems} images (${count} now)`;
  return undefined;
}
