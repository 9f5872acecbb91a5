/** Builds dist/job-api-client/index.mjs; undefined when esbuild is not installed. */
export function buildJobApiClient(): Promise<string | undefined>;
