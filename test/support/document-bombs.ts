/**
 * Crafted documents for the resource tests: a .docx whose document.xml inflates far beyond its file
 * (optionally declaring a small size in the zip, as a bomb that lies would), and a .pdf whose content
 * stream inflates to hundreds of MB of text operators. Written with zlib and a minimal zip writer.
 */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';

interface ZipFile {
  name: string;
  data: Buffer;
  /** The uncompressed size the archive declares (default: the true one). */
  declared?: number;
}

function zip(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const packed = deflateRawSync(file.data, { level: 9 });
    const crc = crc32(file.data);
    const size = file.declared ?? file.data.byteLength;
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
  const body = Buffer.alloc(paragraph.byteLength * paragraphs);
  for (let at = 0; at < body.byteLength; at += paragraph.byteLength) paragraph.copy(body, at);
  return zip([
    { name: '[Content_Types].xml', data: Buffer.from(contentTypes) },
    { name: '_rels/.rels', data: Buffer.from(rels) },
    { name: 'word/document.xml', data: Buffer.concat([head, body, tail]), declared },
  ]);
}

/** A one-page .pdf whose compressed content stream shows `lines` lines of text. */
export function pdfWithLines(lines: number): Buffer {
  const line = Buffer.from('BT /F1 1 Tf 0 0 Td (novel hinge) Tj ET\n');
  const content = Buffer.alloc(line.byteLength * lines);
  for (let at = 0; at < content.byteLength; at += line.byteLength) line.copy(content, at);
  const stream = deflateSync(content, { level: 9 });
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
