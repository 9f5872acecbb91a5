// `mammoth` in the Lambda bundles (an esbuild alias; see ../build-extractors.mjs): the package is a
// file of its own beside the bundle, extractors/mammoth.mjs, imported on first use. A new import from
// mammoth in shared code fails the build here ("No matching export") until it is added.
// This stub lands in a chunk under chunks/ (the function imports it with `import()`), or in the
// entry itself when built without code splitting: the extractors folder is beside the entry.
let loaded;
const load = () => {
  const inChunk = /\/chunks\/[^/]+$/.test(new URL(import.meta.url).pathname);
  const entryFolder = new URL(inChunk ? '../' : './', import.meta.url);
  loaded ??= import(new URL('extractors/mammoth.mjs', entryFolder).href);
  return loaded;
};
export const extractRawText = async (...args) => (await load()).extractRawText(...args);
export const convertToHtml = async (...args) => (await load()).convertToHtml(...args);
