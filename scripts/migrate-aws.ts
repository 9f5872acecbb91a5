/**
 * `npm run migrate:aws -- [--dry-run] [--json] [--segments 4]`: the one-off backfill of the index
 * keys, run once after deploying a version with `byStatusShard`/`byBatchKeys` (docs/concepts/job-table.md).
 * Jobs and batches written before ca6343b lack those indexes' keys and are listed by nothing until it
 * runs. Needs only the table and its region (`OPFLOW_TABLE_NAME` or `OPFLOW_STACK_OUTPUTS`,
 * `AWS_REGION`, `AWS_ENDPOINT_URL[_DYNAMODB]` for an emulator), not the whole `opflow --backend aws`
 * environment (`loadAwsTableConfig`).
 * Safe beside live workers (each update is conditioned on the version it read) and idempotent.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { createDynamoDbClients, migrateIndexKeys } from '../shared/backends/aws';
import { errorMessage } from '../shared/errors/error-message';
import { type AwsTableConfig, loadAwsTableConfig } from '../shared/runtime/aws/pipeline';

const help = `npm run migrate:aws -- [--dry-run] [--json] [--segments 4]

Sets the index keys (byStatusShard, due, byBatchKeys) on jobs and batches written before those
indexes existed, so that listings by status and by batch find them. Run once after the deploy.
Scans the whole job table (--segments parallel segments, paged) and updates only the items that
lack the keys, each on the condition that its version is still the one read: a job a worker commits
meanwhile is left alone (counted as skipped by conflict; run again to take it). A second run
updates nothing.

  --dry-run        count what would be updated, write nothing
  --json           print the counts as JSON
  --segments N     parallel scan segments, 1 to 64 (default 4)
  --help           this text

Environment: only the table and its region: OPFLOW_TABLE_NAME (or OPFLOW_STACK_OUTPUTS, the file
cdk deploy --outputs-file writes, with OPFLOW_STACK_NAME when it holds several stacks); AWS_REGION
(or AWS_DEFAULT_REGION, or the region of the stack's queue URL); AWS_ENDPOINT_URL or
AWS_ENDPOINT_URL_DYNAMODB for an emulator; credentials from the SDK's usual chain (AWS_PROFILE...).
Counts: scanned (job and batch items read), updated, already fine, skipped by conflict, unreadable.
Exit status 1 when an item could not be read or was skipped by conflict.
`;

function fail(message: string): never {
  process.stderr.write(`migrate:aws: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: { 'dry-run'?: boolean; json?: boolean; segments?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        'dry-run': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        segments: { type: 'string', default: '4' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    fail(`${errorMessage(error)}\n\n${help}`);
  }
  if (values.help) {
    process.stdout.write(help);
    return;
  }
  const segments = z.coerce.number().int().min(1).max(64).safeParse(values.segments);
  if (!segments.success) fail(`--segments: must be a whole number from 1 to 64 (got ${values.segments})`);
  let config: AwsTableConfig;
  try {
    config = loadAwsTableConfig();
  } catch (error) {
    fail(errorMessage(error));
  }
  const clients = createDynamoDbClients({
    region: config.region,
    endpoint: config.endpointUrl,
    endpoints: config.endpoints,
    credentials: config.credentials,
  });
  try {
    const result = await migrateIndexKeys({
      client: clients.documents,
      tableName: config.tableName,
      dryRun: values['dry-run'],
      segments: segments.data,
    });
    const counts = { table: config.tableName, dryRun: Boolean(values['dry-run']), ...result };
    if (values.json) process.stdout.write(`${JSON.stringify(counts, null, 2)}\n`);
    else {
      const verb = counts.dryRun ? 'would update' : 'updated';
      process.stdout.write(
        `table ${counts.table}: scanned ${result.scanned}, ${verb} ${result.updated}, already fine ${result.alreadyFine}, ` +
          `skipped by conflict ${result.skippedByConflict}, unreadable ${result.unreadable}\n`,
      );
      for (const problem of result.problems) process.stdout.write(`  unreadable: ${problem}\n`);
      if (result.skippedByConflict > 0) process.stdout.write('Run it again to take the skipped items.\n');
    }
    if (result.unreadable > 0 || result.skippedByConflict > 0) process.exitCode = 1;
  } finally {
    clients.documents.destroy();
    clients.dynamoDb.destroy();
  }
}

await main();
