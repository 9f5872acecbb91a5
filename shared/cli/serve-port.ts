/** The default port of `opflow serve`: next to `opflow sandbox`'s 8787 (apart, so naming it loads nothing else). */
export const defaultServePort = 8788;
