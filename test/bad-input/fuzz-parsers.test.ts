// Property-based fuzzing (fast-check) of the manifest parsers: whatever bytes a JSON Lines or CSV
// manifest holds, reading it ends, never throws, numbers its records in order, and gives each record
// either a value or a reason (never both); JSON Lines offsets only grow and stay within the file, so a
// resumed ingest starts where it should.
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type OpenBytes, readCsv, readJsonLines, type SourceRecord } from '../../shared/ingest/sources';

const bytesOf =
  (bytes: Uint8Array, chunk: number): OpenBytes =>
  async (start) => {
    const rest = Buffer.from(bytes).subarray(start);
    const pieces: Buffer[] = [];
    for (let at = 0; at < rest.byteLength; at += chunk) pieces.push(rest.subarray(at, at + chunk));
    return Readable.from(pieces);
  };

async function all(records: AsyncIterable<SourceRecord>): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

/** Text made of what manifests are made of: JSON punctuation, quotes, delimiters, line ends, odd bytes. */
const manifestText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '{',
        '}',
        '[',
        ']',
        '"',
        ',',
        ';',
        '\t',
        ':',
        '\n',
        '\r\n',
        '\r',
        '\\',
        '\u0000',
        '\uFEFF',
        'é',
        '😀',
      ),
      fc.constantFrom('"id"', '"query"', '1', 'null', 'true', 'TTL:(x)', 'id,query', '""'),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

const manifestBytes = fc.oneof(
  manifestText.map((text) => new Uint8Array(Buffer.from(text))),
  fc.uint8Array({ maxLength: 400 }),
);

describe('fuzzing the manifest parsers (fast-check)', () => {
  it('JSON Lines: ends, never throws, records in order, a value or a reason, offsets within the file', async () => {
    await fc.assert(
      fc.asyncProperty(manifestBytes, fc.integer({ min: 1, max: 64 }), async (bytes, chunk) => {
        const records = await all(readJsonLines(bytesOf(bytes, chunk)));
        let previousEnd = 0;
        records.forEach((record, index) => {
          expect(record.record).toBe(index + 1);
          expect(record.value !== undefined && record.error !== undefined).toBe(false);
          if (record.error !== undefined) expect(record.error).toMatch(/\w/);
          expect(record.bytesEnd).toBeGreaterThanOrEqual(previousEnd);
          expect(record.bytesEnd).toBeLessThanOrEqual(bytes.byteLength + 1);
          previousEnd = record.bytesEnd ?? previousEnd;
        });
      }),
      { numRuns: 300 },
    );
  });

  it('JSON Lines resumed at a committed offset reads the same records as from the start', async () => {
    await fc.assert(
      fc.asyncProperty(manifestText, fc.integer({ min: 0, max: 20 }), async (text, cut) => {
        const bytes = new Uint8Array(Buffer.from(text));
        const whole = await all(readJsonLines(bytesOf(bytes, 16)));
        const at = Math.min(cut, whole.length);
        if (at === 0) return;
        const committed = whole[at - 1] as SourceRecord;
        if (committed.bytesEnd === undefined || committed.bytesEnd > bytes.byteLength) return;
        const rest = await all(readJsonLines(bytesOf(bytes, 16), committed.bytesEnd, committed.record));
        expect(rest.map((r) => [r.record, r.error ?? r.value ?? null])).toEqual(
          whole.slice(at).map((r) => [r.record, r.error ?? r.value ?? null]),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('CSV: ends, never throws, records numbered in order, a value or a reason', async () => {
    await fc.assert(
      fc.asyncProperty(manifestBytes, fc.integer({ min: 1, max: 64 }), async (bytes, chunk) => {
        const records = await all(readCsv(bytesOf(bytes, chunk)));
        const numbers = records.map((record) => record.record);
        expect([...numbers].sort((a, b) => a - b)).toEqual(numbers);
        for (const record of records) {
          expect(record.value !== undefined && record.error !== undefined).toBe(false);
          expect(record.position).toMatch(/^(record \d+|line 1 \(the header\))/);
          if (record.value)
            for (const cell of Object.values(record.value)) expect(cell).not.toContain('\uFFFD');
        }
      }),
      { numRuns: 300 },
    );
  });
});
