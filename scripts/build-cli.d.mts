/** Types of scripts/build-cli.mjs (plain JavaScript so it runs before anything is built). */
export interface CliManifest {
  format: 1;
  entry: string;
  builtAt: number;
  inputs: string[];
  node: string;
}
export const PROJECT_ROOT: string;
export const CLI_ENTRY: string;
export const CLI_OUT_DIR: string;
export function readManifest(root?: string, outDir?: string): CliManifest | undefined;
export function staleReason(root?: string, outDir?: string, manifest?: CliManifest): string | undefined;
export function currentEntry(root?: string, outDir?: string): string | undefined;
export function buildCli(root?: string, outDir?: string): Promise<string>;
export function ensureCliBuilt(
  root?: string,
  outDir?: string,
): Promise<{ entry: string; reason: string | undefined }>;
