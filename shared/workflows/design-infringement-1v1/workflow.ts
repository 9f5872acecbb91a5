/**
 * design-infringement-1v1 (Design Infringement 1v1): one product compared with one registered
 * design, view by view, by the platform: similarity, what they share, how they differ, whether an
 * informed user would confuse them, the risk and how to design around it.
 *
 * p010 upload the product image when it came as data → ai67-1 create the comparison (task_id,
 * valid 8 hours) → ai67-2 poll until the comparison is done.
 */
import type { PollPolicy } from '../../engine/policies';
import { defineWorkflow, type ReportInput, stepsFor } from '../../engine/workflow';
import { nonEmpty, numberState, untilDone } from '../common/step-data';
import { imageFile, imageFromFile, imageLabel, uploadedUrl } from '../design-infringement-search/images';
import { type Design1v1Input, design1v1Input } from './input';
import { design1v1Digest, design1v1Findings, design1v1Markdown, design1v1Summary } from './report';

const name = 'design-infringement-1v1';

/** A comparison takes about a minute; the platform's task lives 8 hours, so one not done in 2 is given up. */
export const design1v1Polls = {
  comparison: { firstDelayMs: 45_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 2 * 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

const step = stepsFor(name, design1v1Input);

const imageUrl = step.key('imageUrl', nonEmpty);
const taskId = step.key('taskId', nonEmpty);

const upload = step.request({
  name: 'upload',
  title: 'upload the product image (p010)',
  operationOf: () => 'p010ImageSearchImageUpload',
  request: (ctx) => ({ body: { image: imageFile(ctx.input.image, 0) } }),
  decide: (data) => {
    const url = uploadedUrl(data);
    return url
      ? { type: 'next', context: imageUrl.set(url) }
      : { type: 'fail', message: 'p010 answered without a url for the product image' };
  },
});

const create = step.call({
  name: 'create',
  title: 'create the comparison',
  operation: 'ai67-1AiInfringementDetection1v1Creation',
  request: (ctx) => ({
    patent_number: ctx.input.patent,
    url: ctx.input.image.url ?? ctx.get(imageUrl),
    report_lang: ctx.input.lang,
  }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai67-1 answered without a task_id' },
});

const comparison = step.call({
  name: 'comparison',
  title: 'wait for the comparison',
  operation: 'ai67-2AiInfringementDetection1v1Query',
  poll: design1v1Polls.comparison,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.task_status), 'the design comparison', data.task_status, () =>
      (data.comparisons ?? []).length > 0
        ? { type: 'complete' }
        : { type: 'fail', message: 'ai67-2 reported success without any comparison' },
    ),
});

export const designInfringement1v1 = defineWorkflow<Design1v1Input>({
  name,
  version: 1,
  description:
    'One product image compared with one registered design, view by view: similarity, differences, confusion, risk and how to design around it.',
  input: design1v1Input,
  fromImage: (bytes, fileName) => ({ image: imageFromFile(bytes, fileName) }),
  steps: [upload, create, comparison],
  start: (input) => (input.image.url ? create : upload),
  report: (r: ReportInput<Design1v1Input>) => {
    const title = `Design comparison: ${r.input.title ?? imageLabel(r.input.image, 0)} vs ${r.input.patent}`;
    return { title, markdown: design1v1Markdown(r, title) };
  },
  summary: design1v1Summary,
  digest: design1v1Digest,
  findings: design1v1Findings,
  takesDocument: false,
  example: {
    image: { url: 'https://static-open.zhihuiya.com/sample/common_demo.png', name: 'unicorn-float.png' },
    patent: 'EU0040356240003S',
    lang: 'en',
  },
});
