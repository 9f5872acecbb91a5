// The design workflows' images in the dashboard's form: judged in the page as the server judges
// them (the same limits, the same verdict on the same first bytes, the same sizes in words), and
// turned into the input the workflows take, one image or a list.
import { describe, expect, it } from 'vitest';
import {
  dataUrlOf,
  fileProblem,
  imageBytes,
  imageKindOf,
  imageText,
  largestImageAsData,
  maxBodyBytes,
  maxImageBytes,
  sizeText,
  urlProblem,
} from '../../../dashboard/src/image-input';
import { formFields, inputOf, valuesOf } from '../../../dashboard/src/input-form';
import { describeWorkflow } from '../../../shared/cli/commands/workflows';
import { defaultMaxBodyBytes, largestImageAsData as serverLargest } from '../../../shared/http/body-limit';
import { workflows } from '../../../shared/workflows';
import * as server from '../../../shared/workflows/design-infringement-search/images';
import { gifImage, tinyPng } from '../../support/images';

const samples: Record<string, Buffer> = {
  png: tinyPng(),
  jpeg: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 9)]),
  gif: gifImage(),
  webp: Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'), Buffer.alloc(64)]),
  pdf: Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj', 'latin1'),
  svg: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'),
  bmp: Buffer.concat([Buffer.from('BM', 'latin1'), Buffer.alloc(64, 2)]),
  heic: Buffer.concat([Buffer.from('\0\0\0\x18ftypheic', 'latin1'), Buffer.alloc(64)]),
  text: Buffer.from('just some words, not an image at all'),
};

describe("the form's image checks", () => {
  it("holds the server's limits: 4,096 KB an image, a 1 MiB body, about 760 KB of image as data", () => {
    expect(maxImageBytes).toBe(server.maxImageBytes);
    expect(maxBodyBytes).toBe(defaultMaxBodyBytes);
    expect(largestImageAsData).toBe(serverLargest(defaultMaxBodyBytes));
    expect(largestImageAsData / 1024).toBe(760);
  });

  it('judges a file by its first bytes as the server does, and names what it is', () => {
    for (const [name, bytes] of Object.entries(samples)) {
      const file = { name: `x-${name}.png`, size: bytes.byteLength };
      const page = fileProblem(file, bytes.subarray(0, 16), 'design-infringement-search');
      const onServer = server.imageProblem(new Uint8Array(bytes));
      if (onServer === undefined) expect(page, name).toBeUndefined();
      else expect(page, name).toBe(`x-${name}.png: ${onServer}`);
    }
    expect(imageKindOf(samples.jpeg!)).toEqual({ type: 'jpeg' });
  });

  it('refuses an empty file, one over the platform limit, and one too large for a request, saying what to do', () => {
    const head = samples.png!.subarray(0, 16);
    const problem = (size: number) =>
      fileProblem({ name: 'front.png', size }, head, 'design-infringement-search');
    expect(problem(0)).toBe('front.png: the file is empty');
    expect(problem(5 * 1024 * 1024)).toBe(
      "front.png: 5.0 MB, over the platform's limit of 4,096 KB: send a smaller image",
    );
    expect(problem(900 * 1024)).toMatch(
      /^front\.png: 900 KB is too large to send from this page \(a request holds 1 MiB, about 760 KB of image\): give its URL instead .*opflow run design-infringement-search "front\.png"/,
    );
    expect(problem(largestImageAsData)).toBeUndefined();
  });

  it('writes sizes as the server does, and reads the size of an image given as data', () => {
    for (const bytes of [1, 900, 1024, 500_000, 1024 * 1024, 1024 * 1024 + 1, 4096 * 1024 + 5, 7_000_000])
      expect(sizeText(bytes), String(bytes)).toBe(server.sizeText(bytes));
    for (const length of [16, 17, 18, 1000]) {
      const data = `data:image/png;base64,${Buffer.alloc(length, 1).toString('base64')}`;
      expect(imageBytes({ data, name: 'a.png' })).toBe(length);
    }
    expect(imageBytes({ url: 'https://example.com/a.png' })).toBe(0);
  });

  it('shows an image kept as plain base64 (as opflow run keeps a file) with the type its first bytes say', () => {
    const plain = tinyPng().toString('base64');
    expect(dataUrlOf({ data: plain, name: 'a.png' })).toBe(`data:image/png;base64,${plain}`);
    expect(dataUrlOf({ data: `data:image/jpeg;base64,${plain}` })).toBe(`data:image/jpeg;base64,${plain}`);
    expect(dataUrlOf({ data: gifImage().toString('base64') })).toBeUndefined();
    expect(dataUrlOf({ url: 'https://example.com/a.png' })).toBeUndefined();
    expect(imageText({ data: plain, name: 'a.png' }, 0)).toBe('a.png (PNG, 1 KB)');
    expect(imageText({ url: 'https://example.com/shots/side%20view.jpg' }, 1)).toBe('side view.jpg (by URL)');
  });

  it('takes http(s) URLs only', () => {
    expect(urlProblem('https://example.com/a.png')).toBeUndefined();
    expect(urlProblem('ftp://example.com/a.png')).toMatch(/an http\(s\) URL/);
    expect(urlProblem('example.com/a.png')).toMatch(/not a URL/);
  });
});

describe('the images field of the design workflows', () => {
  const fieldsOf = (name: string) => formFields(describeWorkflow(workflows.get(name)!));

  it('is a list for the search and one image for the 1v1, and makes the input each takes', () => {
    const search = fieldsOf('design-infringement-search');
    expect(search.find((field) => field.name === 'images')).toMatchObject({ kind: 'images', required: true });
    const png = `data:image/png;base64,${tinyPng().toString('base64')}`;
    const images = [{ data: png, name: 'front.png' }, { url: 'https://example.com/side.jpg' }];
    const made = inputOf(search, { ...valuesOf(search), images: JSON.stringify(images) });
    expect(made.problems).toEqual({});
    expect(made.input.images).toEqual(images);
    expect(workflows.get('design-infringement-search')!.input.safeParse(made.input).success).toBe(true);

    const oneByOne = fieldsOf('design-infringement-1v1');
    const values = { ...valuesOf(oneByOne), image: JSON.stringify([images[0]]), patent: 'EU0040356240003S' };
    const compared = inputOf(oneByOne, values);
    expect(compared.input.image).toEqual(images[0]);
    expect(workflows.get('design-infringement-1v1')!.input.safeParse(compared.input).success).toBe(true);
    // An earlier job's single image comes back into the field as a list of one.
    expect(valuesOf(oneByOne, { image: images[1] }).image).toBe(JSON.stringify([images[1]]));
  });

  it('says when images are missing or too many', () => {
    const search = fieldsOf('design-infringement-search');
    expect(inputOf(search, valuesOf(search)).problems.images).toBe(
      'is required: choose an image file or add its URL',
    );
    const eleven = JSON.stringify(
      Array.from({ length: 11 }, (_, index) => ({ url: `https://x.test/${index}.png` })),
    );
    expect(inputOf(search, { ...valuesOf(search), images: eleven }).problems.images).toBe(
      'takes at most 10 images (11 now)',
    );
  });
});
