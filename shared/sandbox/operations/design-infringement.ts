/**
 * Design infringement, ai39 (search by product image) and ai67 (one product against one design).
 *
 * ai39-1 takes a product image's URL and the offices to search, and answers a `task_id`; the image
 * search, the AI rerank and the risk review take a minute or two. ai39-2 polls it: `task_status` 1
 * while it runs, 3 when it failed (a `[sandbox:fail]` marker in the request), 2 with the image
 * search's hits (similarity 0 to 1), the hits fused with the rerank (RRF), a review of the closest
 * designs (risk High / Medium / Low, similarities, differences, confusion, suggestions) and the
 * countries at risk. ai67-1 takes an image URL and a design's number; ai67-2 answers one comparison
 * per view of the design (score 0 to 100, as the reference's example). The same image is judged
 * the same way (seeded by its URL and the request).
 */
import * as z from 'zod';
import { invalidParameter } from '../sandbox-rejection';
import { hashText, SeededRandom } from '../seeded';
import { numericStatus, type Stage, stageSchema, stageState } from '../stages';
import { failsAt, triggersIn, withoutMarkers } from '../triggers';
import { json, type OperationHandlers, type RegistryFactory } from './contract';

type DesignOperations = Pick<
  OperationHandlers,
  | 'ai39-1ImageSearchSubmit'
  | 'ai39-2ImageSearchReport'
  | 'ai67-1AiInfringementDetection1v1Creation'
  | 'ai67-2AiInfringementDetection1v1Query'
>;

interface DesignSearch {
  owner: string;
  url: string;
  countries: string[];
  lang: string;
  loc: string[];
  field: string;
  applyStart: string;
  inputHash: string;
  stage: Stage;
}

const designSearchSchema = z.strictObject({
  owner: z.string().min(1),
  url: z.string(),
  countries: z.array(z.string()),
  lang: z.string(),
  loc: z.array(z.string()),
  field: z.string(),
  applyStart: z.string(),
  inputHash: z.string(),
  stage: stageSchema,
}) satisfies z.ZodType<DesignSearch>;

interface DesignComparisonTask {
  owner: string;
  url: string;
  patent: string;
  lang: string;
  inputHash: string;
  stage: Stage;
}

const comparisonTaskSchema = z.strictObject({
  owner: z.string().min(1),
  url: z.string(),
  patent: z.string(),
  lang: z.string(),
  inputHash: z.string(),
  stage: stageSchema,
}) satisfies z.ZodType<DesignComparisonTask>;

/** Locarno classes and the product names that go with them. */
const PRODUCTS: readonly [loc: string, en: string, cn: string][] = [
  ['21-01', 'Toy figure', '玩具人偶'],
  ['21-02', 'Inflatable swim ring', '充气游泳圈'],
  ['14-03', 'Wireless earphone case', '无线耳机盒'],
  ['07-01', 'Drinking cup', '水杯'],
  ['26-05', 'Desk lamp', '台灯'],
  ['06-01', 'Chair', '椅子'],
  ['03-01', 'Backpack', '背包'],
  ['10-02', 'Wrist watch', '手表'],
];

const SHAPES_EN = [
  'a rounded cylindrical body',
  'a tapered oval outline',
  'a flat rectangular body with chamfered corners',
  'a ring-shaped body',
  'a domed top over a narrow waist',
];
const SHAPES_CN = ['圆柱形主体', '锥形椭圆轮廓', '带倒角的扁平矩形主体', '环形主体', '窄腰上方的圆顶'];
const DETAILS_EN = [
  'a raised rim along the top edge',
  'two symmetric side lobes',
  'a recessed front panel',
  'a ribbed surface pattern',
  'a contrasting colour band',
];
const DETAILS_CN = ['顶部边缘的凸起边沿', '两侧对称的凸起', '内凹的前面板', '肋状表面纹理', '对比色带'];

export const designViews = [
  'front view',
  'rear view',
  'left view',
  'right view',
  'top view',
  'perspective view',
] as const;

/** Risk from a similarity of 0 to 1, as the platform grades it. */
export function designRisk(score: number): 'High' | 'Medium' | 'Low' {
  return score >= 0.8 ? 'High' : score >= 0.6 ? 'Medium' : 'Low';
}

/** A design registration number of an office, shaped like the office's. */
function designNumber(random: SeededRandom, office: string): string {
  switch (office) {
    case 'US':
      return `USD${random.digits(7)}S1`;
    case 'CN':
      return `CN30${random.digits(7)}S`;
    case 'JP':
      return `JP${random.digits(7)}S`;
    case 'KR':
      return `KR30${random.digits(9)}S`;
    case 'EU':
      return `EU00${random.digits(8)}000${random.int(1, 9)}S`;
    case 'AU':
      return `AU${random.int(2018, 2025)}${random.digits(5)}S`;
    default:
      return `${office}${random.digits(8)}S`;
  }
}

/** yyyyMMdd on or after `from` (yyyyMMdd), before 2026. */
function dateFrom(random: SeededRandom, from: string): number {
  const fromYear = Math.min(2025, Math.max(2005, Number(from.slice(0, 4)) || 2015));
  const year = random.int(fromYear, 2025);
  const date = Number(
    `${year}${String(random.int(1, 12)).padStart(2, '0')}${String(random.int(1, 28)).padStart(2, '0')}`,
  );
  return Math.max(date, Number(from) || 0);
}

interface Texts {
  similar: string;
  difference: string;
  confusion: string;
  risk_desc: string;
  suggestion: string;
}

/** What the review says of one design, in the report's language. */
function reviewTexts(random: SeededRandom, score: number, office: string, cn: boolean): Texts {
  const shape = random.int(0, SHAPES_EN.length - 1);
  const detail = random.int(0, DETAILS_EN.length - 1);
  const other = (detail + 1 + random.int(0, DETAILS_EN.length - 2)) % DETAILS_EN.length;
  const percent = Math.round(score * 100);
  const risk = designRisk(score);
  if (cn)
    return {
      similar: `两者均为${SHAPES_CN[shape]}，并具有${DETAILS_CN[detail]}。`,
      difference: `专利设计具有${DETAILS_CN[other]}，用户产品没有；两者比例略有不同。`,
      confusion:
        risk === 'Low'
          ? '基础形状相似，但设计要部的差异足以让普通消费者区分。'
          : '普通消费者可能因整体轮廓和主要装饰的相似而混淆两者。',
      risk_desc: `相似度${percent}%。${office}的外观设计审查关注整体视觉效果，${risk === 'High' ? '两者整体视觉效果几乎无差别，侵权风险高' : risk === 'Medium' ? '部分要部相同，存在侵权风险' : '要部差异明显，侵权风险低'}。`,
      suggestion:
        risk === 'Low'
          ? '保持现有的区别特征。'
          : `改变${DETAILS_CN[detail]}的造型或位置；调整整体比例，使轮廓与专利设计明显不同。`,
    };
  return {
    similar: `Both have ${SHAPES_EN[shape]} with ${DETAILS_EN[detail]}.`,
    difference: `The registered design has ${DETAILS_EN[other]}, which the product lacks; the proportions differ slightly.`,
    confusion:
      risk === 'Low'
        ? 'The basic shape is alike, but the differences in the dominant features let an informed user tell them apart.'
        : 'An informed user may confuse the two: the overall outline and the dominant ornament match.',
    risk_desc: `Similarity ${percent}%. ${office} practice weighs the overall visual impression: ${risk === 'High' ? 'the two leave the same overall impression, a high risk' : risk === 'Medium' ? 'several dominant features are shared, a risk worth a closer look' : 'the dominant features differ, a low risk'}.`,
    suggestion:
      risk === 'Low'
        ? 'Keep the distinguishing features as they are.'
        : `Change the shape or place of ${DETAILS_EN[detail]}, and alter the proportions so the outline differs from the registered design.`,
  };
}

const imageUrl = (pn: string, view: number) =>
  `https://data-abstract-image.zhihuiya.com/${pn.slice(0, 2)}/S/${pn.slice(2, 12)}/${String(view + 1).padStart(8, '0')}_0001.png`;

/** The whole ai39-2 answer of a finished search. */
function designSearchResult(search: DesignSearch, taskId: string, seed: number) {
  const random = SeededRandom.from(seed, search.inputHash, 'ai39-2');
  const cn = search.lang === 'cn';
  const [loc, productEn, productCn] = random.pick(PRODUCTS);
  const product = search.field || (cn ? productCn : productEn);
  const locs = search.loc.length > 0 ? search.loc : [loc];
  const total = random.int(80, 400);
  const hitCount = Math.min(total, 20);
  const hits = Array.from({ length: hitCount }, (_, index) => {
    const office = random.pick(search.countries);
    const pn = designNumber(random, office);
    const apdt = dateFrom(random, search.applyStart);
    // Scores fall with the rank, with a little noise: the closest few can be very close.
    const score = Math.max(0.2, Math.min(0.97, 0.95 - index * 0.035 - random.next() * 0.08));
    const assignee = random.pick([
      'Kestrel Consumer Products Inc.',
      'Shenlan Household Goods Co., Ltd.',
      'Miyabi Design Corporation',
      'Nordvik Home AB',
      'Hanbit Living Co., Ltd.',
    ]);
    return {
      loc: [locs[index % locs.length] ?? loc],
      url: imageUrl(pn, 0),
      url_120: imageUrl(pn, 0).replace('.png', '_120.png'),
      apdt,
      apno: `${office}${random.digits(8)}`,
      pbdt: Math.min(20251231, apdt + 10000 * random.int(0, 1) + 100 * random.int(1, 6)),
      score: Number(score.toFixed(4)),
      title:
        index % 3 === 0
          ? product
          : `${product} (${random.pick(cn ? ['套装', '改进型', '便携式'] : ['set', 'improved', 'portable'])})`,
      img_id: `${pn}-D0000${random.int(0, 6)}_ABST`,
      inventor: random.pick([
        'Lena Hartmann',
        'Wei Zhang; Min Li',
        'Kenji Sato',
        'Ji-woo Park',
        'Oliver Grant',
      ]),
      authority: office,
      loc_match: random.chance(0.8) ? 1 : 0,
      patent_id: random.uuid(),
      patent_pn: pn,
      risk_level: designRisk(score),
      current_assignee: assignee,
      original_assignee: assignee,
    };
  });
  const reviewed = hits.slice(0, Math.min(hits.length, random.int(5, 8)));
  const comparisons = reviewed.map((hit) => ({
    score: hit.score,
    title: hit.title,
    img_id: hit.img_id,
    status: random.pick([1, 1, 1, 2, 3]),
    country: hit.authority,
    patent_id: hit.patent_id,
    patent_pn: hit.patent_pn,
    risk_level: hit.risk_level,
    ...reviewTexts(random, hit.score, hit.authority, cn),
  }));
  // Only designs in force or pending weigh on the risk of a country.
  const weighing = comparisons.filter((comparison) => comparison.status !== 2);
  const countriesAt = (level: string) => [
    ...new Set(weighing.filter((comparison) => comparison.risk_level === level).map((c) => c.country)),
  ];
  const high = countriesAt('High');
  const middle = countriesAt('Medium').filter((country) => !high.includes(country));
  const suspected = weighing.filter((comparison) => comparison.risk_level !== 'Low');
  return {
    task_id: taskId,
    task_status: 2,
    line_drawing_base64: LINE_DRAWING,
    patent_messages: { patent_messages: hits, total_search_result_count: total },
    rrffusion_response: {
      k_value: 60,
      rerank_count: 200,
      traditional_count: 200,
      patent_messages: hits.map((hit, index) => ({
        ...hit,
        rrf_score: Number((1 / (60 + index + 1) + 1 / (60 + index + 2)).toFixed(6)),
        rerank_rank: index + 1,
        rerank_score: Math.round(hit.score * 100),
        traditional_rank: index + 1 + (index % 2),
        traditional_score: hit.score,
      })),
    },
    report: {
      loc: locs,
      country: search.countries,
      comparisons,
      operate_date: search.stage.startedAt + search.stage.durationMs,
      apply_start_time: search.applyStart,
      high_risk_country: high,
      middle_risk_country: middle,
      suspected_infringement_count: suspected.length,
      suspected_infringement_country: [...new Set(suspected.map((comparison) => comparison.country))],
    },
  };
}

/** The whole ai67-2 answer of a finished comparison. */
function comparisonResult(task: DesignComparisonTask, taskId: string, seed: number) {
  const random = SeededRandom.from(seed, task.inputHash, 'ai67-2');
  const cn = task.lang === 'cn';
  const office = /^[A-Z]{2}/.exec(task.patent)?.[0] ?? 'US';
  const [loc, productEn, productCn] = random.pick(PRODUCTS);
  const closeness = random.next();
  const views = random.int(3, designViews.length);
  const comparisons = Array.from({ length: views }, (_, view) => {
    const score = Math.max(20, Math.min(97, Math.round(45 + closeness * 45 + random.int(-12, 8))));
    return {
      score,
      title: cn ? productCn : productEn,
      status: 1,
      country: office,
      patent_id: random.uuid(),
      patent_pn: task.patent,
      patent_image_url: imageUrl(task.patent, view),
      risk_level: designRisk(score / 100),
      ...reviewTexts(random, score / 100, office, cn),
    };
  });
  const worst = comparisons.reduce((top, item) => (item.score > top.score ? item : top));
  const high = worst.risk_level === 'High';
  const medium = worst.risk_level === 'Medium';
  return {
    task_id: taskId,
    task_status: 2,
    loc: [loc],
    country: [office],
    user_image: task.url,
    comparisons,
    high_risk_country: high ? [office] : [],
    middle_risk_country: medium ? [office] : [],
    suspected_infringement_count: high || medium ? 1 : 0,
    suspected_infringement_country: high || medium ? [office] : [],
  };
}

/** A small line drawing (PNG, an outlined shape), as the platform returns the product's. */
const LINE_DRAWING =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAADAAAAAwCAAAAAByaaZbAAAAq0lEQVR42u2WSw6AMAhE5/6XxpgaU8oMLS4aF2WlhIf8SoUVBQd4tU1WgWYsEFD78JQBvRUhoOKHyAPK3gQBlq9+H4DHs9PY6CKkOwJD6gjlIVVyqlhC0oeOACk56XTnxEWrZykAYtRIwOwDnHAAFgB4YH5y9gJYArAT+GGV6p0uz1J9Wm0KJCfO0vVpKwQ70xnBt4Ym1F4yozdCsvkYku/WD9s7XBDnT+CWC0dz1oyW+a8bAAAAAElFTkSuQmCC';

export function createDesignInfringementOperations(registry: RegistryFactory): DesignOperations {
  const searches = registry<DesignSearch>('design-searches', 'task_id', designSearchSchema);
  const comparisons = registry<DesignComparisonTask>('design-comparisons', 'task_id', comparisonTaskSchema);
  return {
    'ai39-1ImageSearchSubmit': (body, context) => {
      // The reference leaves url optional, but a search without an image has nothing to search.
      if (!body.url) throw invalidParameter('url: the product image is required');
      const taskId = context.newId('uuid');
      const triggers = triggersIn(body);
      const search: Omit<DesignSearch, 'inputHash' | 'stage'> = {
        owner: context.owner,
        url: body.url,
        countries: [...new Set(body.country.map((country) => country.toUpperCase()))],
        lang: body.lang,
        loc: body.loc_items ?? [],
        field: withoutMarkers(body.main_field ?? ''),
        applyStart: body.apply_start_time ?? '',
      };
      searches.add(taskId, {
        ...search,
        inputHash: hashText(JSON.stringify(search).replace(context.owner, '')),
        stage: context.startStage('ai39-1ImageSearchSubmit', taskId, failsAt(triggers, 'ai39-2', 'ai39-2')),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai39-2ImageSearchReport': (body, context) => {
      const search = searches.get(body.task_id, context.owner);
      const state = stageState(search.stage, context.now);
      if (state !== 'succeeded') return json({ task_id: body.task_id, task_status: numericStatus(state) });
      return json(designSearchResult(search, body.task_id, context.seed));
    },

    'ai67-1AiInfringementDetection1v1Creation': (body, context) => {
      const taskId = context.newId('uuid');
      const triggers = triggersIn(body);
      const lang = body.report_lang ?? 'cn';
      const patent = body.patent_number.toUpperCase();
      comparisons.add(taskId, {
        owner: context.owner,
        url: body.url,
        patent,
        lang,
        inputHash: hashText(`${body.url}\n${patent}\n${lang}`),
        stage: context.startStage(
          'ai67-1AiInfringementDetection1v1Creation',
          taskId,
          failsAt(triggers, 'ai67-2', 'ai67-2'),
        ),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai67-2AiInfringementDetection1v1Query': (body, context) => {
      const task = comparisons.get(body.task_id, context.owner);
      const state = stageState(task.stage, context.now);
      if (state !== 'succeeded') return json({ task_id: body.task_id, task_status: numericStatus(state) });
      return json(comparisonResult(task, body.task_id, context.seed));
    },
  };
}
