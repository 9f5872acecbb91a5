/**
 * The cited patents' legal status (p041, simple legal status) and family (p014), as the novelty check
 * and the FTO search fetch them after their references are known: one call of each for all the
 * patents (the platform takes up to 100 numbers or ids, comma-separated), both optional steps (a key
 * without the Patent Basic Data group still gets its report, with the gap stated). Pure readers of
 * the kept answers, and the query both calls (and p011) take.
 */
import { skippedSteps } from '../../engine/workflow';
import { outputOf } from './step-data';

/** The step names the kept answers are read from (persisted in job records: never renamed). */
export const legalStatusStep = 'legal-status';
export const familyStep = 'family';

/** A publication number as patent offices print it: `CN112345678A`, `US2021012345A1`, `EP1234567B1`. */
const PUBLICATION_NUMBER = /^([A-Z]{2})\d[\dA-Z]*[A-Z]\d?$/;

export const isPublicationNumber = (text: string) => PUBLICATION_NUMBER.test(text);

/** The office of a publication number (`EP` of `EP1234567B1`), undefined for anything else. */
export const officeOf = (number: string | undefined) =>
  number ? PUBLICATION_NUMBER.exec(number)?.[1] : undefined;

/** How many patents one Patent Basic Data call (p011, p014, p041) may name. */
export const patentDataBatch = 100;

/**
 * The Patent Basic Data query for a list of patents: by `patent_number` when every id is a
 * publication number (as the sandbox gives), else by `patent_id` (the platform's own ids); the first
 * 100, each once.
 */
export function patentDataQuery(
  ids: readonly (string | null | undefined)[],
): { patent_number: string } | { patent_id: string } {
  const unique = [...new Set(ids.map((id) => (id ?? '').trim()).filter((id) => id !== ''))].slice(
    0,
    patentDataBatch,
  );
  return unique.every(isPublicationNumber)
    ? { patent_number: unique.join(',') }
    : { patent_id: unique.join(',') };
}

/** A patent's simple legal status (p041), and its publication number when the answer gives one. */
export interface LegalStatus {
  /** The platform's simple legal status, e.g. `Active`, `Pending`, `Inactive`. */
  status: string | undefined;
  number: string | undefined;
}

/** Legal statuses by patent id and publication number, from the kept p041 answer (empty without one). */
export function legalStatusesOf(outputs: Record<string, unknown>): Map<string, LegalStatus> {
  const byKey = new Map<string, LegalStatus>();
  for (const row of outputOf(outputs, legalStatusStep, 'p041BasicPatentDataSimpleLegalStatus') ?? []) {
    const record = {
      status: row?.simple_legal_status?.find((status) => status?.trim())?.trim(),
      number: row?.pn?.trim() || undefined,
    };
    for (const key of [row?.patent_id, row?.pn]) if (key?.trim()) byKey.set(key.trim(), record);
  }
  return byKey;
}

/** Whether a simple legal status says the patent can no longer be enforced (lapsed, expired, revoked). */
export const isLapsed = (status: string | undefined) => /^inactive/i.test(status ?? '');

/** A patent's family (p014): the authorities where it has a member, and the members' numbers. */
export interface PatentFamily {
  /** Authorities with a member (`CN`, `US`, `WO`), each once, in the platform's order. */
  countries: string[];
  /** The members' publication numbers, e.g. `US11234567B2`. */
  members: string[];
}

/** Families by patent id and publication number, from the kept p014 answer (empty without one). */
export function familiesOf(outputs: Record<string, unknown>): Map<string, PatentFamily> {
  const byKey = new Map<string, PatentFamily>();
  for (const row of outputOf(outputs, familyStep, 'p014BasicPatentDataPatentFamily') ?? []) {
    const family = row?.patent_family;
    const members = family?.simple_family ?? family?.inpadoc_family ?? family?.patsnap_family ?? [];
    const countries = members
      .map((member) => member?.country?.trim().toUpperCase())
      .filter((country): country is string => Boolean(country));
    const numbers = members
      .map((member) =>
        member?.doc_number ? `${member.country ?? ''}${member.doc_number}${member.kind ?? ''}`.trim() : '',
      )
      .filter((number) => number !== '');
    const record = { countries: [...new Set(countries)], members: [...new Set(numbers)] };
    for (const key of [row?.patent_id, row?.pn]) if (key?.trim()) byKey.set(key.trim(), record);
  }
  return byKey;
}

/** "5 members: CN, US, EP, JP, WO" for a report cell. */
export function familyText(family: PatentFamily | undefined): string | undefined {
  if (!family || family.countries.length === 0) return undefined;
  const size = Math.max(family.members.length, family.countries.length);
  return `${size} ${size === 1 ? 'member' : 'members'}: ${family.countries.join(', ')}`;
}

/**
 * Why a legal-status or family column is empty: not asked for (`optOut` names the input that left
 * it out), its call failed (and why), or nothing was kept. Undefined when the data is there.
 */
export function statusGapNote(
  gap: { what: string; call: string; step: string; asked: boolean; optOut: string },
  context: Record<string, unknown>,
  outputs: Record<string, unknown>,
): string | undefined {
  const { what, call, step, asked, optOut } = gap;
  if (!asked) return `${what} was not asked for (\`${optOut}\`).`;
  const skipped = skippedSteps(context)[step];
  if (skipped)
    return `**${what} is missing:** the ${call} call failed: ${skipped.message.trim() || skipped.kind}. The rest of the search is complete.`;
  if (outputs[step] === undefined) return `${what} was not fetched for this job.`;
  return undefined;
}

/** The notes of both calls for a workflow whose input turns them off with `legalData: false`. */
export function patentStatusNotes(
  asked: boolean,
  context: Record<string, unknown>,
  outputs: Record<string, unknown>,
): { legalStatusNote: string | undefined; familyNote: string | undefined } {
  const optOut = 'legalData: false';
  return {
    legalStatusNote: statusGapNote(
      { what: 'Legal status', call: 'legal-status (p041)', step: legalStatusStep, asked, optOut },
      context,
      outputs,
    ),
    familyNote: statusGapNote(
      { what: 'Family data', call: 'patent-family (p014)', step: familyStep, asked, optOut },
      context,
      outputs,
    ),
  };
}
