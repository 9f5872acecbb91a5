/** The baseline of a cold import (scripts/bundle-sizes.ts): a handler that does nothing, built as the functions are. */
export const handler = async () => ({});
