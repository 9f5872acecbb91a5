/**
 * The inputs of the image-based design workflows (design-infringement-search and -1v1) and of FTO's
 * patents named for comparison, at `opflow run` (image files, folders, JSON inputs) and at the job
 * API. An image is judged by its first bytes, not its name; every error names the file or the field
 * (`images[1]`, `image.data`, `patent`, `comparePatents`); a folder mixing good and bad images runs
 * the good ones and names each bad one.
 */
import { file } from './input-files';
import type { CliRow, FileSpec, HttpRow } from './types';

const usage = 2;
const someBad = 1;

/** A 1x1 PNG and the first bytes of a JPEG (enough for the platform's check: PNG or JPEG by its magic). */
export const tinyPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
export const tinyJpeg = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1,
]);
const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00', 'latin1');
const webp = Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1');
const pdf = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1');
const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';
/** A PNG just over p010's 4,096 KB. */
const overLimitPng = Buffer.concat([tinyPng, Buffer.alloc(4096 * 1024 + 1 - tinyPng.byteLength)]);

const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

/** `opflow run <workflow> {dir}/<file>` with one image file that must be refused (1v1 with its design named). */
const imageFile = (
  name: string,
  workflow: string,
  fileName: string,
  content: FileSpec,
  ...reason: (string | RegExp)[]
): CliRow => {
  const row = file(`${workflow}: ${name}`, workflow, fileName, content, ...reason);
  return workflow === 'design-infringement-1v1'
    ? { ...row, args: [...row.args, '--set', 'patent=EU0040356240003S'] }
    : row;
};

/** `opflow run <workflow> {dir}/input.json` with an input the workflow's schema refuses, naming the field. */
const jsonInput = (workflow: string, input: unknown, ...names: (string | RegExp)[]): CliRow => ({
  name: `${workflow} input ${JSON.stringify(input).slice(0, 60)}`,
  args: ['run', workflow, '{dir}/input.json'],
  files: { 'input.json': JSON.stringify(input) },
  exit: usage,
  names: ['skipping {dir}/input.json', ...names],
});

const url = 'https://example.com/products/front.png';

export const ipWorkflowCliRows: CliRow[] = [
  ...(['design-infringement-search', 'design-infringement-1v1'] as const).flatMap((workflow) => [
    imageFile('a GIF named .png', workflow, 'logo.png', gif, 'not a PNG or JPEG image', 'a GIF image'),
    imageFile('a WebP named .jpg', workflow, 'photo.jpg', webp, 'a WebP image'),
    imageFile('a PDF named .jpeg', workflow, 'drawing.jpeg', pdf, 'a PDF document'),
    imageFile('an SVG named .png', workflow, 'icon.png', svg, 'text (SVG or HTML?)'),
    imageFile(
      'an empty .png',
      workflow,
      'empty.png',
      Buffer.alloc(0),
      /the file is empty|the image is empty/,
    ),
    imageFile(
      'a PNG over 4,096 KB',
      workflow,
      'huge.png',
      overLimitPng,
      'too large (4,097 KB; at most 4 MB)',
    ),
  ]),
  jsonInput('design-infringement-search', {}, 'images'),
  jsonInput('design-infringement-search', { images: [] }, 'images: at least one product image'),
  jsonInput(
    'design-infringement-search',
    { images: Array.from({ length: 11 }, () => ({ url })) },
    'images: at most 10 images per search',
  ),
  jsonInput(
    'design-infringement-search',
    { images: [{ url }, { data: 'data:image/png;base64,@@not base64@@', name: 'side.png' }] },
    'images[1].data',
    'image (side.png): data is not base64 text',
  ),
  jsonInput(
    'design-infringement-search',
    { images: [{ data: dataUrl(gif, 'image/gif'), name: 'anim.gif' }] },
    'images[0].data',
    'image (anim.gif): not a PNG or JPEG image (by its first bytes it is a GIF image)',
  ),
  jsonInput(
    'design-infringement-search',
    { images: [{ data: dataUrl(pdf), name: 'lies.png' }] },
    'images[0].data',
    'by its first bytes it is a PDF document',
  ),
  jsonInput(
    'design-infringement-search',
    { images: [{ url: 'ftp://example.com/front.png' }] },
    'images[0].url',
    'an http(s) URL',
  ),
  jsonInput(
    'design-infringement-search',
    { images: [{ name: 'front.png' }] },
    'give either url',
    'not neither',
  ),
  jsonInput(
    'design-infringement-search',
    { images: [{ url, data: dataUrl(tinyPng) }] },
    'give either url',
    'not both',
  ),
  jsonInput('design-infringement-search', { images: [{ url }], countries: ['USA'] }, 'countries'),
  jsonInput('design-infringement-search', { images: [{ url }], locarno: ['14.03'] }, 'locarno'),
  jsonInput('design-infringement-search', { images: [{ url }], filedFrom: '2020-02-30' }, 'filedFrom'),
  jsonInput('design-infringement-search', { images: [{ url }], lang: 'de' }, 'lang: en or cn'),
  jsonInput('design-infringement-search', { image: { url } }, 'image'),
  jsonInput('design-infringement-1v1', { image: { url } }, 'patent: the registered design to compare with'),
  jsonInput(
    'design-infringement-1v1',
    { image: { url }, patent: 'design 42' },
    'patent: a publication number',
  ),
  jsonInput('design-infringement-1v1', { patent: 'EU0040356240003S' }, 'image'),
  jsonInput(
    'design-infringement-1v1',
    { image: { data: 'data:image/jpeg;base64,not-an-image', name: 'shot.jpg' }, patent: 'USD1055174S1' },
    'image.data',
    'image (shot.jpg)',
  ),
  jsonInput('design-infringement-1v1', { images: [{ url }], patent: 'USD1055174S1' }, 'images'),
  {
    name: 'design-infringement-1v1: an image file without --set patent=',
    args: ['run', 'design-infringement-1v1', '{dir}/front.png'],
    files: { 'front.png': tinyPng },
    exit: usage,
    names: ['skipping {dir}/front.png', 'patent', '--set patent='],
  },
  {
    name: 'design-infringement-search: a folder mixing good and bad images runs the good ones and names each bad one',
    args: ['run', 'design-infringement-search', '{dir}/photos', '--fresh'],
    files: {
      'photos/front.png': tinyPng,
      'photos/side.jpg': tinyJpeg,
      'photos/logo.png': gif,
      'photos/huge.png': overLimitPng,
      'photos/notes.txt': 'not an image',
    },
    exit: someBad,
    namesIn: 'output',
    names: [
      'photos/logo.png',
      'images[0].data: image (logo.png): not a PNG or JPEG image',
      'photos/huge.png',
      'too large (4,097 KB; at most 4 MB)',
    ],
    stdout: [/2 jobs: 2 succeeded/, /✔ front\.png/, /✔ side\.jpg/, /✖ .*logo\.png/, /✖ .*huge\.png/],
  },
  {
    name: 'design-infringement-search: opflow ingest of a manifest with a bad image on line 2 names it and takes the rest',
    args: ['ingest', 'm.jsonl', '--workflow', 'design-infringement-search', '--dry-run'],
    files: {
      'm.jsonl': [
        { id: 'ring', images: [{ url }] },
        { id: 'logo', images: [{ url }, { data: dataUrl(gif, 'image/gif'), name: 'logo.gif' }] },
        { id: 'float', images: [{ data: dataUrl(tinyPng), name: 'float.png' }] },
        { id: 'side', file: 'side.jpg' },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
      'side.jpg': tinyJpeg,
    },
    exit: someBad,
    namesIn: 'output',
    names: ['line 2', 'images[1].data: image (logo.gif): not a PNG or JPEG image'],
    stdout: [/dry run: 4 records, 3 usable, 1 refused/],
    json: { dryRun: true, records: 4, items: 3, problems: [{ position: 'line 2', id: 'logo' }] },
  },
  {
    name: 'design-infringement-search: opflow ingest of a folder mixing good and bad images names each bad one',
    args: ['ingest', 'photos', '--workflow', 'design-infringement-search', '--dry-run'],
    files: {
      'photos/front.png': tinyPng,
      'photos/sub/side.jpeg': tinyJpeg,
      'photos/logo.png': gif,
      'photos/huge.png': overLimitPng,
    },
    exit: someBad,
    namesIn: 'output',
    names: [
      'logo.png',
      'a GIF image',
      'huge.png',
      "the image is 4,097 KB, over the platform's limit of 4,096 KB",
    ],
    stdout: [/dry run: 4 records, 2 usable, 2 refused/],
    json: { dryRun: true, records: 4, items: 2 },
  },
  jsonInput(
    'fto',
    { text: 'x', comparePatents: ['latch patent'] },
    'comparePatents: each is a publication number',
  ),
  jsonInput(
    'fto',
    { text: 'x', comparePatents: 'CN118289111A, 12345' },
    'comparePatents: each is a publication number',
  ),
  jsonInput('fto', { text: 'x', comparePatents: [] }, 'comparePatents: name at least one patent'),
  jsonInput(
    'fto',
    {
      text: 'x',
      comparePatents: [
        'CN118289111A',
        'US11234567B2',
        'EP1234567B1',
        'JP2020123456A',
        'KR102345678B1',
        'WO2020123456A1',
      ],
    },
    'comparePatents: at most 5 patents',
  ),
  jsonInput('fto', { text: 'x', comparePatents: [42] }, 'comparePatents'),
];

const post = (name: string, input: unknown, workflow: string, ...names: (string | RegExp)[]): HttpRow => ({
  name: `${workflow}: ${name}`,
  method: 'POST',
  path: '/jobs',
  body: { workflow, input },
  status: 400,
  names,
});

export const ipWorkflowApiRows: HttpRow[] = [
  post('no images', {}, 'design-infringement-search', 'images'),
  post(
    'a GIF as a data URL',
    { images: [{ url }, { data: dataUrl(gif, 'image/gif'), name: 'anim.gif' }] },
    'design-infringement-search',
    'images[1].data',
    'image (anim.gif): not a PNG or JPEG image',
  ),
  post(
    'a data URL that is not base64',
    { images: [{ data: 'data:image/png;base64,%%%' }] },
    'design-infringement-search',
    'images[0].data',
    'data is not base64 text',
  ),
  post(
    'a file: URL',
    { images: [{ url: 'file:///etc/passwd' }] },
    'design-infringement-search',
    'images[0].url',
  ),
  post(
    'no patent',
    { image: { url } },
    'design-infringement-1v1',
    'patent: the registered design to compare with',
  ),
  post(
    'a patent that is not a publication number',
    { image: { url }, patent: '' },
    'design-infringement-1v1',
    'patent',
  ),
  post(
    'a BMP as a data URL named .jpg',
    {
      image: { data: dataUrl(Buffer.from('BM\x00\x00\x00\x00', 'latin1'), 'image/bmp'), name: 'a.jpg' },
      patent: 'USD1055174S1',
    },
    'design-infringement-1v1',
    'image.data',
    'a BMP image',
  ),
  post('comparePatents malformed', { text: 'x', comparePatents: ['US 11/234,567'] }, 'fto', 'comparePatents'),
  post(
    'comparePatents too many',
    {
      text: 'x',
      comparePatents: [
        'CN118289111A',
        'CN118289112A',
        'CN118289113A',
        'CN118289114A',
        'CN118289115A',
        'CN118289116A',
      ],
    },
    'fto',
    'comparePatents: at most 5 patents',
  ),
];
