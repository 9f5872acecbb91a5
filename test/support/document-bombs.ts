/**
 * Crafted documents for the resource tests: a .docx whose document.xml inflates far beyond its file
 * (optionally declaring a small size in the zip, as a bomb that lies would), and a .pdf whose content
 * stream inflates to hundreds of MB of text operators. Written with zlib and a minimal zip writer.
 *
 * The inflated content is never held whole: a bomb is a short unit (a paragraph, a text line)
 * repeated millions of times, so its deflate stream is one compressed chunk of the unit repeated
 * (each chunk ends in a full flush, which starts the next with an empty window), repeated as bytes,
 * and its CRC-32 / Adler-32 are combined from the chunk's (zlib's crc32_combine / adler32_combine).
 * The file inflates to exactly the bytes the unit repeated would (what a reader sees is the same
 * bomb), at the same ratio within a fraction of a percent, in milliseconds where compressing 1 GB
 * took 40 to 100 s on a loaded two-core machine.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';

/** A piece of a file's uncompressed data: `unit` repeated `count` times. */
interface Piece {
  unit: Buffer;
  count: number;
}

interface ZipFile {
  name: string;
  data: Piece[];
  /** The uncompressed size the archive declares (default: the true one). */
  declared?: number;
}

/** Units per compressed chunk: about 1 MiB of uncompressed data. */
const chunkUnits = (unit: Buffer) => Math.max(1, Math.floor(2 ** 20 / unit.byteLength));

// CRC-32 of A followed by B from crc(A), crc(B) and |B| (zlib's crc32_combine, GF(2) matrices).
function gf2Times(matrix: Uint32Array, vector: number): number {
  let sum = 0;
  for (let i = 0; vector !== 0; i++, vector >>>= 1) if (vector & 1) sum ^= matrix[i]!;
  return sum >>> 0;
}
function gf2Square(square: Uint32Array, matrix: Uint32Array): void {
  for (let n = 0; n < 32; n++) square[n] = gf2Times(matrix, matrix[n]!);
}
function crc32Combine(crc1: number, crc2: number, length2: number): number {
  if (length2 <= 0) return crc1;
  const even = new Uint32Array(32);
  const odd = new Uint32Array(32);
  odd[0] = 0xedb88320;
  for (let n = 1, row = 1; n < 32; n++, row <<= 1) odd[n] = row;
  gf2Square(even, odd);
  gf2Square(odd, even);
  let crc = crc1 >>> 0;
  let length = length2;
  do {
    gf2Square(even, odd);
    if (length % 2) crc = gf2Times(even, crc);
    length = Math.floor(length / 2);
    if (length === 0) break;
    gf2Square(odd, even);
    if (length % 2) crc = gf2Times(odd, crc);
    length = Math.floor(length / 2);
  } while (length !== 0);
  return (crc ^ crc2) >>> 0;
}

// Adler-32 (zlib's adler32 and adler32_combine).
const adlerBase = 65521;
function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (let at = 0; at < data.byteLength; at += 5552) {
    const end = Math.min(data.byteLength, at + 5552);
    for (let i = at; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= adlerBase;
    b %= adlerBase;
  }
  return ((b << 16) | a) >>> 0;
}
function adler32Combine(adler1: number, adler2: number, length2: number): number {
  const rem = length2 % adlerBase;
  let sum1 = adler1 & 0xffff;
  let sum2 = (rem * sum1) % adlerBase;
  sum1 += (adler2 & 0xffff) + adlerBase - 1;
  sum2 += ((adler1 >>> 16) & 0xffff) + ((adler2 >>> 16) & 0xffff) + adlerBase - rem;
  if (sum1 >= adlerBase) sum1 -= adlerBase;
  if (sum1 >= adlerBase) sum1 -= adlerBase;
  if (sum2 >= adlerBase * 2) sum2 -= adlerBase * 2;
  if (sum2 >= adlerBase) sum2 -= adlerBase;
  return ((sum2 << 16) | sum1) >>> 0;
}

/** The checksum of `value` (of `length` bytes) repeated `times` times, by doubling. */
function repeatedChecksum(
  combine: (first: number, second: number, length2: number) => number,
  empty: number,
  value: number,
  length: number,
  times: number,
): number {
  let result = empty;
  let resultLength = 0;
  let power = value;
  let powerLength = length;
  for (let left = times; left > 0; left = Math.floor(left / 2)) {
    if (left % 2) {
      result = resultLength === 0 ? power : combine(result, power, powerLength);
      resultLength += powerLength;
    }
    if (left > 1) {
      power = combine(power, power, powerLength);
      powerLength *= 2;
    }
  }
  return result;
}

/** The raw deflate stream of the pieces, their size, CRC-32 and Adler-32, none of it held whole. */
function deflatePieces(pieces: Piece[]): { packed: Buffer; size: number; crc: number; adler: number } {
  const parts: Buffer[] = [];
  let size = 0;
  let crc = 0;
  let adler = 1;
  const add = (chunk: Buffer, times: number) => {
    if (times === 0 || chunk.byteLength === 0) return;
    const packed = deflateRawSync(chunk, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
    parts.push(times === 1 ? packed : Buffer.alloc(packed.byteLength * times, packed));
    const length = chunk.byteLength * times;
    crc = crc32Combine(crc, repeatedChecksum(crc32Combine, 0, crc32(chunk), chunk.byteLength, times), length);
    adler = adler32Combine(
      adler,
      repeatedChecksum(adler32Combine, 1, adler32(chunk), chunk.byteLength, times),
      length,
    );
    size += length;
  };
  for (const { unit, count } of pieces) {
    if (count === 0) continue;
    const per = Math.min(count, chunkUnits(unit));
    add(Buffer.alloc(unit.byteLength * per, unit), Math.floor(count / per));
    add(Buffer.alloc(unit.byteLength * (count % per), unit), 1);
  }
  // The last block: empty, final.
  parts.push(deflateRawSync(Buffer.alloc(0)));
  return { packed: Buffer.concat(parts), size, crc, adler };
}

function zip(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const { packed, size: trueSize, crc } = deflatePieces(file.data);
    const size = file.declared ?? trueSize;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.byteLength, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.byteLength, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.byteLength, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.byteLength, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.byteLength + name.byteLength + packed.byteLength;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.byteLength, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const rels = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** A .docx whose document.xml holds `paragraphs` paragraphs; `declared` lies about its size. */
export function docxWithParagraphs(paragraphs: number, declared?: number): Buffer {
  const paragraph = Buffer.from('<w:p><w:r><w:t>novel hinge for a folding helmet</w:t></w:r></w:p>');
  const head = Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>',
  );
  const tail = Buffer.from('</w:body></w:document>');
  const once = (data: string) => [{ unit: Buffer.from(data), count: 1 }];
  return zip([
    { name: '[Content_Types].xml', data: once(contentTypes) },
    { name: '_rels/.rels', data: once(rels) },
    {
      name: 'word/document.xml',
      data: [
        { unit: head, count: 1 },
        { unit: paragraph, count: paragraphs },
        { unit: tail, count: 1 },
      ],
      declared,
    },
  ]);
}

/** A one-page .pdf whose compressed content stream shows `lines` lines of text. */
export function pdfWithLines(lines: number): Buffer {
  const line = Buffer.from('BT /F1 1 Tf 0 0 Td (novel hinge) Tj ET\n');
  // A zlib stream (what /FlateDecode reads): its header, the raw deflate, the Adler-32 of the content.
  const { packed, adler } = deflatePieces([{ unit: line, count: lines }]);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler, 0);
  const stream = Buffer.concat([Buffer.from([0x78, 0xda]), packed, trailer]);
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    ),
    Buffer.concat([
      Buffer.from(`<< /Length ${stream.byteLength} /Filter /FlateDecode >>\nstream\n`),
      stream,
      Buffer.from('\nendstream'),
    ]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let length = parts[0]!.byteLength;
  objects.forEach((object, index) => {
    offsets.push(length);
    const framed = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), object, Buffer.from('\nendobj\n')]);
    parts.push(framed);
    length += framed.byteLength;
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n `),
    'trailer',
    `<< /Size ${objects.length + 1} /Root 1 0 R >>`,
    'startxref',
    String(length),
    '%%EOF',
  ].join('\n');
  parts.push(Buffer.from(xref));
  return Buffer.concat(parts);
}
