// The `unpdf` the ingest function loads on demand (built into extractors/unpdf.mjs; see ../build-extractors.mjs).
export { extractText, getDocumentProxy } from 'unpdf';
