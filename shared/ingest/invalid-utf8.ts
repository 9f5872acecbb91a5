/**
 * Where a text's bytes stop being UTF-8: the manifest readers (sources.ts) and the document reader
 * (documents.ts) both name the byte, and the manifest readers must not load the document reader.
 */

/** Where the first invalid UTF-8 sequence of `body` starts, or undefined when it is all valid. */
export function invalidUtf8Offset(body: Uint8Array): number | undefined {
  // A prefix is valid when it decodes in streaming mode (which keeps an unfinished character for later).
  const valid = (end: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(0, end), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return undefined;
  } catch {}
  let low = 0;
  // All of it valid in streaming mode: only the end is cut in the middle of a character.
  let high = valid(body.byteLength) ? body.byteLength + 1 : body.byteLength;
  while (high - low > 1) {
    const middle = (low + high) >>> 1;
    if (valid(middle)) low = middle;
    else high = middle;
  }
  // The first prefix that fails ends with the bad byte; the sequence may have started up to 3 before.
  let start = Math.min(high - 1, body.byteLength - 1);
  for (let at = start; at >= Math.max(0, high - 4); at--) {
    const byte = body[at] ?? 0;
    if (byte >= 0xc0) {
      start = at;
      break;
    }
    if (byte < 0x80 && at !== high - 1) break;
  }
  return start;
}
