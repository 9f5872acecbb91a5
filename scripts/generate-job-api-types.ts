/**
 * Writes the TypeScript types of the job API (shared/job-api-client/schema.d.ts) from the OpenAPI
 * document `GET /openapi.json` serves, with openapi-typescript, the generator people run on it:
 *
 *   npx tsx scripts/generate-job-api-types.ts           write the file
 *   npx tsx scripts/generate-job-api-types.ts --check   exit 1 when the file is not current
 *
 * The typed client (shared/job-api-client) is built on these types, so a route or answer that
 * changes without a regenerated file fails the type check and the OpenAPI test.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { jobApiOpenApi } from '../shared/http/openapi';

export const JOB_API_TYPES_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  '../shared/job-api-client/schema.d.ts',
);

const header = `/**
 * The job API's types, generated from its OpenAPI document (GET /openapi.json) by openapi-typescript.
 * Do not edit: run \`npx tsx scripts/generate-job-api-types.ts\` after changing a route or an answer.
 */
`;

/** The file's text as the generator writes it today. */
export async function jobApiTypes(): Promise<string> {
  const doc = jobApiOpenApi();
  // biome-ignore lint/suspicious/noExplicitAny: openapi-typescript takes the document as plain JSON
  const ast = await openapiTS(doc as any);
  return `${header}\n${astToString(ast)}`;
}

async function main(): Promise<void> {
  const text = await jobApiTypes();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(JOB_API_TYPES_FILE, 'utf8');
    } catch {}
    if (current !== text) {
      process.stderr.write(
        `${JOB_API_TYPES_FILE} is not current: run npx tsx scripts/generate-job-api-types.ts\n`,
      );
      process.exit(1);
    }
    process.stdout.write('the job API types are current\n');
    return;
  }
  writeFileSync(JOB_API_TYPES_FILE, text);
  process.stdout.write(`wrote ${JOB_API_TYPES_FILE}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
