export declare const EXTRACTOR_PACKAGES: readonly string[];
export declare const ESM_REQUIRE_BANNER: string;
export declare function extractorAliases(): Record<string, string>;
export declare function buildDocumentExtractors(
  bundleDir: string,
  options?: { target?: string | undefined },
): Promise<Record<string, number>>;
export declare function buildDocumentExtractorsSync(
  bundleDir: string,
  options?: { target?: string | undefined },
): Record<string, number>;
