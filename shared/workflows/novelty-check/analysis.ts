/**
 * What a novelty check found, worked out from the platform's answers for the report: each compared
 * feature under one id, a features × references matrix (a mark and the platform's score per cell),
 * each reference's citation category (X, Y, A) and the claims it bears on, and the conclusion
 * (features anticipated by a single document, found only elsewhere or as close variants, not found;
 * "in combination" only of two documents or more, one of them rated Y).
 *
 * Pure functions of the kept step outputs; the report (novelty-report.ts) only renders them.
 */
import type { DataOf } from '../../openplatform/schemas/responses';
import { plainText } from '../../reports/markdown';

type Feature = NonNullable<DataOf<'ai35-4FeatureExtract'>['data']>[number];
export type Reference = NonNullable<DataOf<'ai35-8NoveltySearchAgentResult'>['final_result']>[number];
type Comparison = NonNullable<Reference['features']>[number];

/** How far a reference discloses a feature, as the platform judged it. */
export type Disclosure = 'disclosed' | 'similar' | 'not-disclosed' | 'unknown';

export const disclosureMark: Record<Disclosure, string> = {
  disclosed: '●',
  similar: '◐',
  'not-disclosed': '○',
  unknown: '?',
};

export interface FeatureRow {
  /** `f1`, `f2`... as offered for selection (features the platform added get the next ids). */
  id: string;
  text: string;
  /** The platform's own number (`F1`, `F1.1`), when it gives one. */
  number?: string | undefined;
  weight?: string | undefined;
  selected: boolean;
  /** Not among the features ai35-4 offered (the platform compared a text of its own). */
  added?: boolean;
}

export interface MatrixCell {
  disclosure: Disclosure;
  /** The platform's similarity score, 0–100 (the user-modified one when there is one). */
  score?: number | undefined;
  comparison: Comparison;
}

export type CitationCategory = 'X' | 'Y' | 'A';

export interface CitedReference {
  /** `D1`, `D2`... in the platform's order (by public score). */
  label: string;
  reference: Reference;
  /** The publication number or the platform's patent id. */
  id: string;
  category: CitationCategory;
  /** Whether the category is the platform's own (`comparative_literature_type`) or worked out here. */
  categorySource: 'platform' | 'derived';
  /** Claim numbers of the compared features this reference discloses or comes close to. */
  claims: number[];
  /** Cells by feature id. */
  cells: Map<string, MatrixCell>;
  disclosed: string[];
  similar: string[];
}

export interface NoveltyConclusion {
  /** The document that discloses the most compared features (the closest prior art). */
  closest?: CitedReference | undefined;
  /** Features the closest document alone discloses. */
  single: string[];
  /** Features found only in other documents (or only as close variants): with the documents. */
  combination: { feature: string; references: string[] }[];
  /** Features no reference discloses or comes close to. */
  notFound: string[];
  verdict: string;
}

export interface NoveltyAnalysis {
  features: FeatureRow[];
  /** The features the search compared (selected, or compared by the platform all the same). */
  compared: FeatureRow[];
  /** References that are prior art (published on or before the cut-off, or of unknown date). */
  references: CitedReference[];
  /** References published after the cut-off: not prior art, never X or Y, shown apart. */
  late: (CitedReference & { published: string })[];
  /** The prior-art cut-off checked against (the priority date, else the search's end), if any. */
  cutoff?: string | undefined;
  /** Prior-art references whose publication date is not known, so not checked against the cut-off. */
  undated: string[];
  conclusion: NoveltyConclusion;
}

/** The prior-art cut-off and how to date a reference (its publication date, YYYY-MM-DD). */
export interface PriorArtDating {
  cutoff: string;
  publishedOn: (reference: CitedReference) => string | undefined;
}

const normalise = (text: unknown) => plainText(text).replace(/\s+/g, ' ').trim().toLowerCase();
/** A feature's text as a matching key: letters and digits only, so punctuation differences still match. */
const textKey = (text: unknown) => normalise(text).replace(/[^\p{L}\p{N}]+/gu, '');

const toNumber = (value: unknown): number | undefined => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

/** The platform's judgement of one comparison as a mark: `type` (public / obvious / unpublic) first. */
export function disclosureOf(comparison: Comparison): Disclosure {
  const type = normalise(comparison.type_for_user ?? comparison.type);
  if (type === 'public') return 'disclosed';
  if (type === 'obvious') return 'similar';
  if (type === 'unpublic' || type === 'non-public' || type === 'nonpublic') return 'not-disclosed';
  if (comparison.similar === true) return 'disclosed';
  if (comparison.similar === false) return 'not-disclosed';
  return 'unknown';
}

function categoryOf(
  reference: Reference,
  disclosedCount: number,
  similarCount: number,
): { category: CitationCategory; source: 'platform' | 'derived' } {
  const own = plainText(reference.comparative_literature_type).trim().toUpperCase();
  if (own === 'X' || own === 'Y' || own === 'A') return { category: own, source: 'platform' };
  // Worked out as a search examiner would: relevant alone, in combination, or background.
  const category = normalise(reference.comparative_literature_category);
  const creativity = normalise(reference.creativity_type);
  if (disclosedCount > 0 && (category === 'novelty' || creativity === 'public'))
    return { category: 'X', source: 'derived' };
  if (disclosedCount + similarCount > 0) return { category: 'Y', source: 'derived' };
  return { category: 'A', source: 'derived' };
}

/** `[1, 2, 3, 5]` → "1–3, 5". */
export function claimRanges(claims: number[]): string {
  const sorted = [...new Set(claims)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}${j === i + 1 ? ', ' : '–'}${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

const list = (ids: string[]) => ids.join(', ');

export function analyseNovelty(
  offered: Feature[],
  picked: ReadonlySet<string>,
  found: Reference[],
  dating?: PriorArtDating,
): NoveltyAnalysis {
  const features: FeatureRow[] = offered.map((feature, index) => ({
    id: `f${index + 1}`,
    text: plainText(feature.feature_text ?? feature.feature_text_original).trim() || `feature ${index + 1}`,
    number: plainText(feature.feature_num).trim() || undefined,
    weight: plainText(feature.feature_weight).trim() || undefined,
    selected: picked.has(`f${index + 1}`),
  }));
  const byText = new Map<string, FeatureRow>();
  offered.forEach((feature, index) => {
    const row = features[index] as FeatureRow;
    for (const text of [feature.feature_text, feature.feature_text_original]) {
      const key = textKey(text);
      if (key !== '' && !byText.has(key)) byText.set(key, row);
    }
  });
  const featureFor = (comparison: Comparison): FeatureRow => {
    const key = textKey(comparison.tech_feature ?? comparison.compare_feature);
    const known = byText.get(key);
    if (known) return known;
    const row: FeatureRow = {
      id: `f${features.length + 1}`,
      text: plainText(comparison.tech_feature ?? comparison.compare_feature).trim() || 'a feature',
      selected: true,
      added: true,
    };
    features.push(row);
    byText.set(key, row);
    return row;
  };

  const all: CitedReference[] = found.map((reference, index) => {
    const cells = new Map<string, MatrixCell>();
    const claims: number[] = [];
    for (const comparison of reference.features ?? []) {
      const feature = featureFor(comparison);
      const disclosure = disclosureOf(comparison);
      const score = toNumber(comparison.score_for_user) ?? toNumber(comparison.score);
      // One cell per feature: the better comparison wins when the platform compares a feature twice.
      const before = cells.get(feature.id);
      if (!before || (score ?? -1) > (before.score ?? -1))
        cells.set(feature.id, { disclosure, score, comparison });
      const claim = toNumber(comparison.claim_num);
      if ((disclosure === 'disclosed' || disclosure === 'similar') && claim !== undefined) claims.push(claim);
    }
    const disclosed = [...cells].filter(([, cell]) => cell.disclosure === 'disclosed').map(([id]) => id);
    const similar = [...cells].filter(([, cell]) => cell.disclosure === 'similar').map(([id]) => id);
    const { category, source } = categoryOf(reference, disclosed.length, similar.length);
    return {
      label: `D${index + 1}`,
      reference,
      id: plainText(reference.patent_id).trim() || `reference ${index + 1}`,
      category,
      categorySource: source,
      claims: [...new Set(claims)].sort((a, b) => a - b),
      cells,
      disclosed,
      similar,
    };
  });

  // A document published after the cut-off is not prior art: it is never X or Y, nor in the conclusion.
  const references: CitedReference[] = [];
  const late: NoveltyAnalysis['late'] = [];
  const undated: string[] = [];
  for (const reference of all) {
    const published = dating?.publishedOn(reference);
    if (dating && published !== undefined && published > dating.cutoff)
      late.push({ ...reference, category: 'A', categorySource: 'derived', published });
    else {
      if (dating && published === undefined) undated.push(reference.label);
      references.push(reference);
    }
  }
  const comparedIds = new Set(all.flatMap((reference) => [...reference.cells.keys()]));
  const compared = features.filter(
    (feature) => comparedIds.has(feature.id) || (feature.selected && references.length === 0),
  );
  return {
    features,
    compared,
    references,
    late,
    cutoff: dating?.cutoff,
    undated,
    conclusion: concludeNovelty(compared, references),
  };
}

function concludeNovelty(compared: FeatureRow[], references: CitedReference[]): NoveltyConclusion {
  const ids = compared.map((feature) => feature.id);
  const score = (reference: CitedReference) => toNumber(reference.reference.public_score) ?? -1;
  const closest = [...references].sort(
    (a, b) =>
      b.disclosed.length - a.disclosed.length ||
      Number(b.reference.most_similar === true) - Number(a.reference.most_similar === true) ||
      score(b) - score(a),
  )[0];
  const single = closest ? ids.filter((id) => closest.disclosed.includes(id)) : [];
  const combination: NoveltyConclusion['combination'] = [];
  const notFound: string[] = [];
  for (const id of ids) {
    if (single.includes(id)) continue;
    const disclosing = references.filter((reference) => reference.disclosed.includes(id));
    const near = references.filter((reference) => reference.similar.includes(id));
    const by = (disclosing.length > 0 ? disclosing : near).map((reference) => reference.label);
    if (by.length > 0) combination.push({ feature: id, references: by });
    else notFound.push(id);
  }
  let verdict: string;
  if (references.length === 0) verdict = 'No reference was found: nothing anticipates the features searched.';
  else if (closest && single.length === ids.length && ids.length > 0)
    verdict = `Anticipated: ${closest.label} (${closest.id}) alone discloses every compared feature.`;
  else if (notFound.length === 0 && ids.length > 0)
    verdict = combinationVerdict(ids, references, closest, single, combination);
  else
    verdict = `Novel over the references found: ${list(notFound)} ${notFound.length === 1 ? 'is' : 'are'} in none of them.`;
  return { closest, single, combination, notFound, verdict };
}

/**
 * Every compared feature is found, but in no one document. "In combination" is said only of at
 * least two documents that together cover every feature, none of them background (A) and one at
 * least rated Y (relevant in combination with another document). Otherwise the verdict says what
 * is true: where each feature is, and why no combination is established.
 */
function combinationVerdict(
  ids: string[],
  references: CitedReference[],
  closest: CitedReference | undefined,
  single: string[],
  combination: NoveltyConclusion['combination'],
): string {
  const relevant = references.filter((reference) => reference.category !== 'A');
  const covering = fewestCovering(ids, relevant, closest && relevant.includes(closest) ? closest : undefined);
  const uncovered = ids.filter((id) => !covering.some((reference) => coverage(reference, closest).has(id)));
  if (
    covering.length >= 2 &&
    uncovered.length === 0 &&
    covering.some((reference) => reference.category === 'Y')
  )
    return `Not anticipated by a single document, but every compared feature is found in combination (${covering
      .map((reference) => reference.label)
      .join(' + ')}): inventive step is in question.`;
  const byLabel = new Map(references.map((reference) => [reference.label, reference]));
  const where = combination.map(({ feature, references: labels }) => {
    const near = labels.every((label) => !byLabel.get(label)?.disclosed.includes(feature));
    const cited = labels.map((label) => `${label} (${byLabel.get(label)?.category ?? '?'})`).join(', ');
    return `${feature} ${near ? 'only as a close variant in' : 'only in'} ${cited}`;
  });
  const found = closest
    ? `${closest.label} discloses ${single.length > 0 ? list(single) : 'none of them'}; ${where.join('; ')}`
    : where.join('; ');
  const why = !references.some((reference) => reference.category === 'Y')
    ? 'no reference is rated Y (relevant in combination with another document)'
    : `the documents rated X or Y do not together disclose ${list(uncovered)}`;
  return `Not anticipated by a single document: ${found}. No combination of documents is established: ${why}.`;
}

/** The features a document covers in a combination: the closest one's disclosed, another's close ones too. */
const coverage = (reference: CitedReference, closest: CitedReference | undefined) =>
  new Set(closest === reference ? reference.disclosed : [...reference.disclosed, ...reference.similar]);

/**
 * Few documents that together disclose (or come close to) every feature: the closest one, then
 * greedily the one that adds the most features not yet covered.
 */
function fewestCovering(
  ids: string[],
  references: CitedReference[],
  closest: CitedReference | undefined,
): CitedReference[] {
  const covers = (reference: CitedReference) => coverage(reference, undefined);
  const left = new Set(ids);
  const chosen: CitedReference[] = [];
  const take = (reference: CitedReference) => {
    chosen.push(reference);
    for (const id of coverage(reference, closest)) left.delete(id);
  };
  if (closest) take(closest);
  while (left.size > 0) {
    let best: CitedReference | undefined;
    let gain = 0;
    for (const reference of references) {
      if (chosen.includes(reference)) continue;
      const adds = [...covers(reference)].filter((id) => left.has(id)).length;
      if (adds > gain) [best, gain] = [reference, adds];
    }
    if (!best) break;
    take(best);
  }
  return chosen;
}
