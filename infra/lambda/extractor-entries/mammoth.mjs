// The `mammoth` the ingest function loads on demand (built into extractors/mammoth.mjs; see ../build-extractors.mjs).
import mammoth from 'mammoth';

export const { extractRawText, convertToHtml } = mammoth;
