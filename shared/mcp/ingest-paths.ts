/**
 * Which files the MCP `ingest` tool may read: a manifest or folder whose real path (symbolic links
 * followed) is under one of the allowed roots, so an agent reads only where it was let.
 */
import { realpath } from 'node:fs/promises';
import { delimiter, isAbsolute, relative, resolve, sep } from 'node:path';
import type { BatchSourceKind } from '../engine/batch-store';
import { ApiError } from '../http/api-error';
import { IngestRefused } from '../ingest/ingest';
import { localSourceKind } from '../ingest/local-source';

/**
 * The roots `ingest` may read under: OPFLOW_INGEST_ROOTS (folders separated by the system's path
 * delimiter, `:` on Linux and macOS), else the working directory.
 */
export function ingestRootsFrom(env: Record<string, string | undefined>, cwd: string): string[] {
  const listed = (env.OPFLOW_INGEST_ROOTS ?? '')
    .split(delimiter)
    .map((root) => root.trim())
    .filter((root) => root !== '');
  return listed.length > 0 ? listed.map((root) => resolve(cwd, root)) : [cwd];
}

/**
 * What a path to ingest is (a folder, a JSON Lines manifest or a CSV one), refused unless its real
 * path (symbolic links followed) is inside one of `roots`: an agent reads only where it was let.
 */
export async function sourceKindOf(path: string, roots: readonly string[]): Promise<BatchSourceKind> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new ApiError(400, 'invalid-request', `path: ${path}: no such file or folder on the opflow machine`);
  }
  const realRoots = await Promise.all(roots.map((root) => realpath(root).catch(() => resolve(root))));
  const inside = realRoots.some((root) => {
    const rest = relative(root, real);
    return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest));
  });
  if (!inside)
    throw new ApiError(
      403,
      'forbidden',
      `path: ${path} is outside the folders ingest may read (${realRoots.join(', ')}); set OPFLOW_INGEST_ROOTS to allow another`,
    );
  try {
    return await localSourceKind(real, path);
  } catch (error) {
    if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', `path: ${error.message}`);
    throw error;
  }
}
