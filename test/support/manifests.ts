/**
 * Manifests for the ingestion tests: N good patent-count lines with 20 malformed ones of different
 * kinds mixed in at known places, as JSON Lines or as CSV.
 */

export interface BadLine {
  /** 1-based line (JSONL) or record (CSV) number. */
  at: number;
  /** What the reason must mention. */
  reason: RegExp;
}

/** The 20 kinds of bad JSON Lines, each with what its reason says. */
const badJsonLines: { text: (i: number) => string; reason: RegExp }[] = [
  { text: () => '{"id": "broken", "query": ', reason: /not valid JSON/ },
  { text: () => 'not json at all', reason: /not valid JSON/ },
  { text: () => '[1, 2, 3]', reason: /must be a JSON object, not an array/ },
  { text: () => '"just a string"', reason: /must be a JSON object/ },
  { text: () => '{"query": "TTL:(no id)"}', reason: /id: .*required/ },
  { text: () => '{"id": "", "query": "TTL:(empty id)"}', reason: /id: the id is empty/ },
  { text: () => '{"id": true, "query": "TTL:(bool id)"}', reason: /id: / },
  { text: () => '{"id": "d5", "query": "TTL:(duplicate)"}', reason: /duplicate id "d5"/ },
  { text: (i) => `{"id": "q${i}", "query": ""}`, reason: /query: the search expression is empty/ },
  { text: (i) => `{"id": "q${i}"}`, reason: /query: the search expression is required/ },
  { text: (i) => `{"id": "q${i}", "query": 42}`, reason: /query/ },
  { text: (i) => `{"id": "q${i}", "query": "${'x'.repeat(1600)}"}`, reason: /at most 1,500 characters/ },
  {
    text: (i) => `{"id": "q${i}", "query": "TTL:(a)", "colour": "red"}`,
    reason: /colour|Unrecognized|unrecognized/i,
  },
  { text: (i) => `{"id": "q${i}", "query": "TTL:(a)", "collapseType": "NOPE"}`, reason: /collapseType/ },
  {
    text: (i) => `{"id": "q${i}", "workflow": "no-such-flow", "query": "TTL:(a)"}`,
    reason: /unknown workflow "no-such-flow"/,
  },
  { text: (i) => `{"id": "q${i}", "file": "missing-${i}.txt"}`, reason: /does not exist/ },
  {
    text: (i) => `{"id": "q${i}", "file": "/etc/hostname"}`,
    reason: /must be a path relative to the manifest/,
  },
  { text: (i) => `{"id": "q${i}", "file": "empty.txt"}`, reason: /empty/ },
  { text: (i) => `{"id": "q${i}", "file": "picture.png"}`, reason: /unsupported document type/ },
  {
    text: (i) => `{"id": "q${i}", "query": "TTL:(a)", "select": "sometimes"}`,
    reason: /select: must be "auto" or "manual"/,
  },
];

/** Files the manifest's `file` lines refer to (beside the manifest). */
export const manifestFiles: Record<string, string | Uint8Array> = {
  'empty.txt': '',
  'picture.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
  'good.txt': 'TTL:(file based query)',
};

/** `total` lines: good ones `{"id": "d<i>", "query": ...}` and the 20 bad ones spread out. */
export function jsonlManifest(total = 1000): { text: string; bad: BadLine[]; goodIds: string[] } {
  const lines: string[] = [];
  const bad: BadLine[] = [];
  const goodIds: string[] = [];
  const every = Math.floor(total / badJsonLines.length);
  let kind = 0;
  for (let line = 1; line <= total; line++) {
    if (line % every === 0 && kind < badJsonLines.length) {
      const entry = badJsonLines[kind++]!;
      lines.push(entry.text(line));
      bad.push({ at: line, reason: entry.reason });
    } else if (line === 7) {
      lines.push(JSON.stringify({ id: `d${line}`, file: 'good.txt', title: 'From a file' }));
      goodIds.push(`d${line}`);
    } else {
      lines.push(
        JSON.stringify({ id: `d${line}`, query: `TTL:(battery ${line})`, title: `Battery ${line}` }),
      );
      goodIds.push(`d${line}`);
    }
  }
  return { text: `${lines.join('\n')}\n`, bad, goodIds };
}

/** The same as CSV: semicolons, a BOM, quoted fields with embedded newlines and delimiters. */
export function csvManifest(total = 1000): { text: string; bad: BadLine[]; goodIds: string[] } {
  const rows: string[] = ['id;query;title;collapseType'];
  const bad: BadLine[] = [];
  const goodIds: string[] = [];
  const kinds: { row: (i: number) => string; reason: RegExp }[] = [
    { row: (i) => `c${i};"TTL:(bad"quote)";x;`, reason: /not a valid CSV record/ },
    { row: (i) => `c${i};TTL:(a);too;many;fields`, reason: /not a valid CSV record/ },
    { row: () => ';TTL:(no id);x;', reason: /id: .*required/ },
    { row: (i) => `c${i};;no query;`, reason: /query: the search expression is required/ },
    { row: (i) => `c${i};${'y'.repeat(1600)};long;`, reason: /at most 1,500 characters/ },
    { row: (i) => `c${i};TTL:(a);x;NOPE`, reason: /collapseType/ },
    { row: () => 'c5;TTL:(again);dup;', reason: /duplicate id "c5"/ },
  ];
  const every = Math.floor(total / 20);
  let count = 0;
  for (let record = 1; record <= total; record++) {
    if (record % every === 0 && count < 20) {
      const entry = kinds[count % kinds.length]!;
      rows.push(entry.row(record));
      bad.push({ at: record, reason: entry.reason });
      count += 1;
    } else if (record % 97 === 0) {
      rows.push(`c${record};"TTL:(wind\nturbine ${record})";"Wind; offshore";`);
      goodIds.push(`c${record}`);
    } else {
      rows.push(`c${record};TTL:(solar ${record});Solar ${record};`);
      goodIds.push(`c${record}`);
    }
  }
  return { text: `\uFEFF${rows.join('\r\n')}\r\n`, bad, goodIds };
}
