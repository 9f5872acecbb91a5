/**
 * design-infringement-search (Design Infringement Search): registered designs that look like a
 * product, found from the product's images, each reviewed for infringement risk by the platform.
 *
 * For each image, in order: p010 upload it when it came as data (a URL the platform can read) →
 * ai39-1 submit the search (task_id) → ai39-2 poll until the search, its AI rerank and the risk
 * review are done. Each image's answers are kept as they come (`image-N-...`), so a crash never
 * pays for an image twice.
 */
import type { PollPolicy } from '../../engine/policies';
import {
  type Decision,
  defineWorkflow,
  type ReportInput,
  type StepContext,
  stepsFor,
} from '../../engine/workflow';
import { nonEmpty, nonNegativeInt, numberState, untilDone } from '../common/step-data';
import { imageFile, imageFromFile, imageLabel, uploadedUrl } from './images';
import { type DesignSearchInput, designSearchInput, designSearchTitle, imageOutput } from './input';
import {
  designSearchDigest,
  designSearchFindings,
  designSearchMarkdown,
  designSearchSummary,
} from './report';

const name = 'design-infringement-search';

/** The search and its review take a minute or two; one still running after an hour is given up. */
export const designSearchPolls = {
  result: { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

const step = stepsFor(name, designSearchInput);

/** The image being searched. */
const imageIndex = step.key('imageIndex', nonNegativeInt);
/** The current image's URL as the platform reads it (its own, or p010's). */
const imageUrl = step.key('imageUrl', nonEmpty);
const taskId = step.key('taskId', nonEmpty);

type Ctx = StepContext<DesignSearchInput, typeof name>;
const current = (ctx: Ctx) => ctx.find(imageIndex) ?? 0;

const upload = step.request({
  name: 'upload',
  title: 'upload a product image (p010)',
  operationOf: () => 'p010ImageSearchImageUpload',
  outputName: (ctx) => imageOutput(current(ctx), 'upload'),
  request: (ctx) => {
    const index = current(ctx);
    const image = ctx.input.images[index];
    return { body: { image: image ? imageFile(image, index) : new File([], 'missing.png') } };
  },
  decide: (data, ctx) => {
    const url = uploadedUrl(data);
    return url
      ? { type: 'next', step: submit, context: imageUrl.set(url) }
      : {
          type: 'fail',
          message: `p010 answered without a url for ${imageLabel(ctx.input.images[current(ctx)] ?? {}, current(ctx))}`,
        };
  },
});

const submit = step.call({
  name: 'submit',
  title: 'submit the image search',
  operation: 'ai39-1ImageSearchSubmit',
  outputName: (ctx) => imageOutput(current(ctx), 'submit'),
  request: (ctx) => {
    const image = ctx.input.images[current(ctx)];
    return {
      url: image?.url ?? ctx.get(imageUrl),
      country: ctx.input.countries,
      lang: ctx.input.lang,
      ...(ctx.input.locarno?.length ? { loc_items: ctx.input.locarno } : {}),
      ...(ctx.input.field ? { main_field: ctx.input.field } : {}),
      ...(ctx.input.filedFrom ? { apply_start_time: ctx.input.filedFrom.replaceAll('-', '') } : {}),
    };
  },
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai39-1 answered without a task_id' },
});

/** After image `index`: the next image (uploaded first when it came as data), or the end. */
function afterImage(ctx: Ctx): Decision<typeof name> {
  const next = current(ctx) + 1;
  const image = ctx.input.images[next];
  if (!image) return { type: 'complete' };
  return { type: 'next', step: image.url ? submit : upload, context: imageIndex.set(next) };
}

const result = step.call({
  name: 'result',
  title: 'wait for the search and its risk review',
  operation: 'ai39-2ImageSearchReport',
  poll: designSearchPolls.result,
  outputName: (ctx) => imageOutput(current(ctx), 'result'),
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data, ctx) =>
    untilDone(numberState(data.task_status), 'the design search', data.task_status, () =>
      data.report || data.patent_messages
        ? afterImage(ctx)
        : { type: 'fail', message: 'ai39-2 reported success without a report or search results' },
    ),
});

export const designInfringementSearch = defineWorkflow<DesignSearchInput>({
  name,
  version: 1,
  description:
    'Registered designs that look like a product, found from its images (PNG/JPEG), each with its similarity, jurisdiction, legal status and infringement risk.',
  input: designSearchInput,
  fromImage: (bytes, fileName) => ({ images: [imageFromFile(bytes, fileName)] }),
  steps: [upload, submit, result],
  start: (input) => (input.images[0]?.url ? submit : upload),
  report: (r: ReportInput<DesignSearchInput>) => {
    const title = `Design infringement search: ${designSearchTitle(r.input, imageLabel)}`;
    return { title, markdown: designSearchMarkdown(r, title) };
  },
  summary: designSearchSummary,
  digest: designSearchDigest,
  findings: designSearchFindings,
  takesDocument: false,
  example: {
    images: [{ url: 'https://static-open.zhihuiya.com/sample/common_demo.png', name: 'swim-ring-front.png' }],
    countries: ['US', 'EU', 'CN'],
    field: 'inflatable swim ring',
    lang: 'en',
  },
});
