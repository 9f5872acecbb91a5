/**
 * What an FTO search found, read for its reader: each patent with its office, legal status, family
 * reach, risk and claim chart (a row per element of each independent claim); the risk per market;
 * and the recommendation that follows. Pure functions of the job's kept outputs.
 */

import { type SkippedStep, skippedSteps } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import { plainText } from '../../reports/markdown';
import {
  familiesOf,
  isLapsed,
  isPublicationNumber,
  legalStatusesOf,
  officeOf,
  patentStatusNotes,
} from '../common/patent-status';
import { outputOf } from '../common/step-data';
import { addedPatents, compareStepName, isAdded } from './compare';

type FoundPatent = NonNullable<DataOf<'ai66-5AgentResult'>['final_result']>[number];

export type Risk = 'High' | 'Medium' | 'Low';
const RISKS: readonly Risk[] = ['High', 'Medium', 'Low'];

/** One row of a claim chart: a claim element against the product's feature. */
export interface ChartRow {
  element: string;
  product: string;
  match: 'identical' | 'equivalent' | 'different' | 'unknown';
  score: number | undefined;
}

export interface IndependentClaim {
  number: number;
  text: string | undefined;
  rows: ChartRow[];
  /** Whether every element reads on the product (the platform's `infringement`, else from the rows). */
  reads: boolean;
}

export interface PatentRisk {
  label: string;
  id: string;
  /** The publication number (from the id, or p041/p014's `pn`); undefined when unknown. */
  number: string | undefined;
  office: string | undefined;
  title: string | undefined;
  /** p041's simple legal status, e.g. `Active`; undefined when not known. */
  legalStatus: string | undefined;
  /** Authorities where the family has a member (p014), the patent's own office first. */
  family: string[] | undefined;
  risk: Risk;
  /** Whether the status says the patent can no longer be infringed (Inactive). */
  lapsed: boolean;
  claims: IndependentClaim[];
  dependentRead: number[];
  conclusion: string | undefined;
  score: number | undefined;
  /** Named for comparison (`comparePatents`, ai66-8), not found by the search: its risk is derived from the scores. */
  added: boolean;
  raw: FoundPatent;
}

export interface MarketRisk {
  market: string;
  risk: Risk | 'None';
  /** The live patents that reach the market, highest risk first. */
  patents: PatentRisk[];
}

export interface FtoAnalysis {
  patents: PatentRisk[];
  markets: MarketRisk[];
  /** Markets named in the input, or the offices the patents came from when none were named. */
  named: boolean;
  legalStatusNote: string | undefined;
  familyNote: string | undefined;
  /** The patents named for comparison that could not be compared, with why. */
  notCompared: { number: string; why: string }[];
  recommendation: string;
}

const riskOf = (value: unknown): Risk => {
  const text = plainText(value).trim().toLowerCase();
  return text === 'high' ? 'High' : text === 'medium' ? 'Medium' : 'Low';
};

const numberOf = (value: unknown) => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

const matchOf = (type: unknown, similar: unknown): ChartRow['match'] => {
  const text = plainText(type).trim().toLowerCase();
  if (text === 'identical' || text === 'equivalent' || text === 'different') return text;
  if (similar === true) return 'equivalent';
  if (similar === false) return 'different';
  return 'unknown';
};

/** A patent's claim chart: its independent claims, each element against the product. */
function claimsOf(patent: FoundPatent): { claims: IndependentClaim[]; dependentRead: number[] } {
  const texts = new Map<number, string>();
  for (const claim of patent.claims ?? []) {
    const number = numberOf(claim?.claim_num);
    if (number !== undefined && claim?.claim_text) texts.set(number, claim.claim_text.trim());
  }
  const infringed = new Map<number, boolean>();
  for (const item of patent.claim_equivalent_info ?? []) {
    const number = numberOf(item?.claim_num);
    if (number !== undefined && typeof item?.infringement === 'boolean')
      infringed.set(number, item.infringement);
  }
  const byClaim = new Map<number, ChartRow[]>();
  for (const row of patent.features ?? []) {
    if (!row) continue;
    const type = plainText(row.claim_type).trim().toLowerCase();
    if (type !== '' && type !== 'independent') continue;
    const number = numberOf(row.claim_num) ?? 1;
    const rows = byClaim.get(number) ?? [];
    rows.push({
      element: plainText(row.tech_feature).trim(),
      product: plainText(row.comparison_feature ?? row.compare_feature).trim(),
      match: matchOf(row.type_for_user ?? row.type, row.similar),
      score: numberOf(row.score_for_user ?? row.score),
    });
    byClaim.set(number, rows);
  }
  const claims = [...byClaim.entries()]
    .sort(([a], [b]) => a - b)
    .map(([number, rows]) => ({
      number,
      text: texts.get(number),
      rows,
      reads:
        infringed.get(number) ?? rows.every((row) => row.match === 'identical' || row.match === 'equivalent'),
    }));
  const independent = new Set(claims.map((claim) => claim.number));
  const dependentRead = [...infringed.entries()]
    .filter(([number, reads]) => reads && !independent.has(number))
    .map(([number]) => number)
    .sort((a, b) => a - b);
  return { claims, dependentRead };
}

const rank = (risk: Risk | 'None') => (risk === 'None' ? 3 : RISKS.indexOf(risk));

/** The analysis of a finished FTO job's kept outputs. */
export function analyseFto(
  outputs: Record<string, unknown>,
  context: Record<string, unknown>,
  input: {
    markets?: string[] | undefined;
    legalData?: boolean | undefined;
    comparePatents?: string[] | undefined;
  },
): FtoAnalysis {
  const found = [
    ...(outputOf(outputs, 'agent-result', 'ai66-5AgentResult')?.final_result ?? []),
    ...addedPatents(outputs, input.comparePatents),
  ];
  const legal = legalStatusesOf(outputs);
  const family = familiesOf(outputs);
  const patents = found
    .filter((patent): patent is FoundPatent => Boolean(patent?.patent_id))
    .map((patent) => {
      const id = (patent.patent_id as string).trim();
      const status = legal.get(id);
      const number = isPublicationNumber(id) ? id : status?.number;
      const office = officeOf(number);
      const members = (family.get(id) ?? (number ? family.get(number) : undefined))?.countries;
      const { claims, dependentRead } = claimsOf(patent);
      const conclusion = patent.comparison_conclusion ?? {};
      const text = plainText(conclusion['en']).trim() || plainText(conclusion['zh']).trim();
      return {
        label: '',
        id,
        number,
        office,
        title: plainText(patent.document).trim() || undefined,
        legalStatus: status?.status,
        family: members ? [...new Set([...(office ? [office] : []), ...members])] : undefined,
        risk: riskOf(patent.risk_level),
        lapsed: isLapsed(status?.status),
        claims,
        dependentRead,
        conclusion: text || undefined,
        score: numberOf(patent.public_score),
        added: isAdded(patent),
        raw: patent,
      } satisfies PatentRisk;
    })
    .sort((a, b) => Number(a.lapsed) - Number(b.lapsed) || rank(a.risk) - rank(b.risk))
    .map((patent, index) => ({ ...patent, label: `P${index + 1}` }));
  const named = (input.markets?.length ?? 0) > 0;
  const marketList = named
    ? (input.markets as string[])
    : [
        ...new Set(
          patents.map((patent) => patent.office).filter((office): office is string => Boolean(office)),
        ),
      ];
  const reaches = (patent: PatentRisk, market: string) =>
    patent.office === market || (patent.family ?? []).includes(market);
  const markets = marketList.map((market) => {
    const live = patents.filter((patent) => !patent.lapsed && reaches(patent, market));
    const risk = live.reduce<Risk | 'None'>(
      (worst, patent) => (rank(patent.risk) < rank(worst) ? patent.risk : worst),
      'None',
    );
    return { market, risk, patents: live };
  });
  const uncompared = notCompared(input.comparePatents, context);
  return {
    patents,
    markets,
    named,
    ...patentStatusNotes(input.legalData !== false, context, outputs),
    notCompared: uncompared,
    recommendation: recommendation(patents, markets, uncompared),
  };
}

/** The patents named for comparison whose ai66-8 call failed for good, with why. */
function notCompared(
  named: readonly string[] | undefined,
  context: Record<string, unknown>,
): FtoAnalysis['notCompared'] {
  const skipped = skippedSteps(context);
  return (named ?? []).flatMap((number, index) => {
    const why = skipped[compareStepName(index)];
    return why ? [{ number, why: failureWords(why) }] : [];
  });
}

/**
 * A failed call in words a reader can act on: an HTTP failure by its status and correlation id (not
 * the gateway's page it answered), anything else by its message.
 */
function failureWords(why: SkippedStep): string {
  const correlation = /correlation id ([\w-]+)/.exec(why.message)?.[1];
  if (why.httpStatus !== undefined && why.httpStatus >= 500)
    return `the platform answered HTTP ${why.httpStatus}${correlation ? ` (correlation id ${correlation})` : ''}`;
  return why.message.trim() || why.kind;
}

/** The recommendation, from the worst risk per market. */
function recommendation(
  patents: PatentRisk[],
  markets: MarketRisk[],
  uncompared: FtoAnalysis['notCompared'],
): string {
  const live = patents.filter((patent) => !patent.lapsed);
  // Named patents whose risk is not known: no clearance can be read from a search that found nothing.
  if (patents.length === 0 && uncompared.length > 0)
    return `Nothing was compared: the search found no patent in force or pending in the markets searched, and ${
      uncompared.length === 1 ? 'the patent' : `none of the ${uncompared.length} patents`
    } named for comparison (${uncompared.map(({ number }) => number).join(', ')}) could be compared, so ${
      uncompared.length === 1 ? 'its' : 'their'
    } risk is not known. Run the job again (opflow retry) or have counsel review ${
      uncompared.length === 1 ? 'it' : 'them'
    } before launch.`;
  if (live.length === 0)
    return patents.length === 0
      ? 'No patent in force or pending was found in the markets searched: no obstacle from this search. Confirm with a professional search before launch.'
      : 'Every patent found has lapsed: no obstacle from this search.';
  const where = (risk: Risk) =>
    markets.filter((market) => market.risk === risk).map((market) => market.market);
  const high = where('High');
  const medium = where('Medium');
  const names = (risk: Risk) =>
    live
      .filter((patent) => patent.risk === risk)
      .map((patent) => `${patent.label} ${patent.number ?? patent.id}`);
  const parts: string[] = [];
  if (high.length === 0 && names('High').length > 0)
    parts.push(
      `Before launching where ${names('High').join(', ')} ${names('High').length === 1 ? 'is' : 'are'} in force (the office is not known), get a licence, a design-around or an opinion.`,
    );
  if (high.length > 0)
    parts.push(
      `Do not launch in ${high.join(', ')} before a licence, a design-around of the elements that read, or an invalidity or non-infringement opinion on ${names('High').join(', ')}.`,
    );
  if (medium.length > 0)
    parts.push(
      `In ${medium.join(', ')}, have counsel review ${names('Medium').join(', ')}: some elements read on the product, others differ.`,
    );
  if (parts.length === 0)
    parts.push(
      'No independent claim reads on the product: low risk from this search. Keep the differences the charts show.',
    );
  return parts.join(' ');
}
