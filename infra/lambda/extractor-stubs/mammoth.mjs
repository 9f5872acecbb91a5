// `mammoth` in the Lambda bundles (an esbuild alias; see ../build-extractors.mjs): the package is a
// file of its own beside the bundle, extractors/mammoth.mjs, imported on first use. A new import from
// mammoth in shared code fails the build here ("No matching export") until it is added.
let loaded;
const load = () => {
  loaded ??= import(new URL('./extractors/mammoth.mjs', import.meta.url).href);
  return loaded;
};
export const extractRawText = async (...args) => (await load()).extractRawText(...args);
