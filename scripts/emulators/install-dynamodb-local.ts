/**
 * Installs AWS's DynamoDB Local (the Java emulator) into `.emulators/dynamodb-local/`, taken from the
 * `amplify-dynamodb-simulator` npm package, which ships DynamoDBLocal.jar and its native libraries.
 * Idempotent and safe to run from several processes at once: it extracts into a temporary folder
 * and renames it into place, so a half-written install is never seen.
 *
 * Run by hand: `npx tsx scripts/emulators/install-dynamodb-local.ts`. The test helpers call
 * `ensureDynamoDbLocal()` themselves, so `npm test` works on a fresh clone.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The npm package and version the emulator comes from (pinned so every clone runs the same 1.25.x). */
export const dynamoDbLocalPackage = 'amplify-dynamodb-simulator@2.9.30';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface DynamoDbLocalInstall {
  /** The folder holding DynamoDBLocal.jar and DynamoDBLocal_lib. */
  home: string;
  jarPath: string;
  /** Pass as `-Djava.library.path` so sqlite4java finds its native library. */
  libraryPath: string;
}

/** Where the emulator lives: `<project>/.emulators/dynamodb-local` unless `root` says otherwise. */
export function dynamoDbLocalHome(root = projectRoot): string {
  return join(root, '.emulators', 'dynamodb-local');
}

function describe(home: string): DynamoDbLocalInstall {
  return { home, jarPath: join(home, 'DynamoDBLocal.jar'), libraryPath: join(home, 'DynamoDBLocal_lib') };
}

function isInstalled(home: string): boolean {
  const install = describe(home);
  return existsSync(install.jarPath) && existsSync(install.libraryPath);
}

/**
 * Make sure DynamoDB Local is installed and say where. Does nothing when it already is; otherwise
 * downloads the package with `npm pack` (about 55 MB) and extracts the jar and its libraries.
 */
export async function ensureDynamoDbLocal(root = projectRoot): Promise<DynamoDbLocalInstall> {
  const home = dynamoDbLocalHome(root);
  if (isInstalled(home)) return describe(home);

  const emulators = join(root, '.emulators');
  await mkdir(emulators, { recursive: true });
  const work = await mkdtemp(join(emulators, 'dynamodb-local-download-'));
  try {
    await run('npm', ['pack', dynamoDbLocalPackage, '--pack-destination', work, '--silent'], {
      cwd: work,
      maxBuffer: 1024 * 1024,
    });
    const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${dynamoDbLocalPackage} produced no tarball in ${work}`);
    await run('tar', [
      '-xzf',
      join(work, tarball),
      '-C',
      work,
      'package/emulator/DynamoDBLocal.jar',
      'package/emulator/DynamoDBLocal_lib',
      'package/emulator/LICENSE.txt',
    ]);
    try {
      await rename(join(work, 'package', 'emulator'), home);
    } catch (error) {
      // Another process finished first: its copy is as good as ours.
      if (!isInstalled(home)) throw error;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  if (!isInstalled(home)) throw new Error(`DynamoDB Local is still missing from ${home} after installing`);
  return describe(home);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureDynamoDbLocal().then(
    (install) => console.log(`DynamoDB Local is installed in ${install.home}`),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
