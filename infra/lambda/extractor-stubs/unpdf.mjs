// `unpdf` in the Lambda bundles (an esbuild alias; see ../build-extractors.mjs): the package is a
// file of its own beside the bundle, extractors/unpdf.mjs, imported on first use. A new import from
// unpdf in shared code fails the build here ("No matching export") until it is added.
let loaded;
const load = () => {
  loaded ??= import(new URL('./extractors/unpdf.mjs', import.meta.url).href);
  return loaded;
};
export const getDocumentProxy = async (...args) => (await load()).getDocumentProxy(...args);
export const extractText = async (...args) => (await load()).extractText(...args);
