/**
 * Simple legal status (p041) and patent family (p014): a record per patent asked for (up to 100,
 * comma-separated), by publication number or patent id, as p011 answers. Each follows from the run's
 * seed and the number alone, so a patent has the same status and family in every answer, and the FTO
 * search (ai66-5) finds only patents whose status its `legal_status` filter allows
 * (`ftoLegalStatusCode`).
 */
import type { DataOf } from '../../openplatform/schemas/responses';
import { SeededRandom } from '../seeded';
import { bibliographyRecord, isPublicationNumber, patentKeys } from './bibliography';
import { json, type OperationHandlers } from './contract';

type LegalStatusRecord = NonNullable<DataOf<'p041BasicPatentDataSimpleLegalStatus'>>[number];
type FamilyRecord = NonNullable<DataOf<'p014BasicPatentDataPatentFamily'>>[number];

/**
 * The platform's simple legal statuses, and how often the sandbox gives each: a granted patent (kind
 * B) is mostly in force, an application (kind A) mostly pending.
 */
const GRANTED = [
  ['Active', 0.75],
  ['Inactive', 0.2],
] as const;
const APPLIED = [
  ['Pending', 0.7],
  ['Inactive', 0.25],
] as const;

/** A patent's simple legal status, from the seed and its number alone. */
export function simpleLegalStatus(seed: number, patent: string): string {
  const draw = SeededRandom.from(seed, 'p041', patent).next();
  const granted = /B\d?$/.test(patent);
  let sum = 0;
  for (const [status, share] of granted ? GRANTED : APPLIED) {
    sum += share;
    if (draw < sum) return status;
  }
  return 'Undetermined';
}

/** ai66-1's `legal_status` code of a status: 0 invalid, 1 valid, 2 under examination. */
export function ftoLegalStatusCode(status: string): 0 | 1 | 2 {
  return status === 'Active' ? 1 : status === 'Pending' ? 2 : 0;
}

const AUTHORITIES = ['CN', 'US', 'EP', 'JP', 'KR', 'DE', 'WO'] as const;

/** The family members of a patent: itself and one to four filings at other authorities. */
export function familyMembers(
  seed: number,
  patent: string,
): { country: string; doc_number: string; kind: string }[] {
  const own = bibliographyRecord(seed, patent, isPublicationNumber(patent) ? 'number' : 'id');
  const reference = own.bibliographic_data?.publication_reference;
  const country = reference?.country ?? 'US';
  const random = SeededRandom.from(seed, 'p014', patent);
  const others = random.sample(
    AUTHORITIES.filter((authority) => authority !== country),
    random.int(1, 4),
  );
  return [
    { country, doc_number: reference?.doc_number ?? random.digits(9), kind: reference?.kind ?? 'A' },
    ...others.map((authority) => ({
      country: authority,
      doc_number: authority === 'WO' ? `${random.int(2015, 2024)}${random.digits(6)}` : random.digits(9),
      kind: authority === 'US' ? 'B2' : authority === 'WO' ? 'A1' : random.pick(['A', 'B1']),
    })),
  ];
}

function legalStatusRecord(seed: number, key: string, by: 'number' | 'id', id?: string): LegalStatusRecord {
  const record = bibliographyRecord(seed, key, by);
  return {
    pn: record.pn,
    patent_id: id ?? record.patent_id,
    simple_legal_status: [simpleLegalStatus(seed, by === 'number' ? key : (record.pn ?? key))],
  };
}

function familyRecord(seed: number, key: string, by: 'number' | 'id', id?: string): FamilyRecord {
  const record = bibliographyRecord(seed, key, by);
  const members = familyMembers(seed, by === 'number' ? key : (record.pn ?? key)).map((member, index) => ({
    ...member,
    sequence: index + 1,
  }));
  const familyId = SeededRandom.from(seed, 'p014-id', key).int(100_000_000, 999_999_999);
  return {
    pn: record.pn,
    patent_id: id ?? record.patent_id,
    patent_family: {
      simple_family: members,
      inpadoc_family: members,
      patsnap_family: members,
      simple_family_id: familyId,
      inpadoc_family_id: familyId + 1,
      patsnap_family_id: familyId + 1,
    },
  };
}

export function createPatentStatusOperations(): Pick<
  OperationHandlers,
  'p041BasicPatentDataSimpleLegalStatus' | 'p014BasicPatentDataPatentFamily'
> {
  return {
    p041BasicPatentDataSimpleLegalStatus: (body, context) =>
      json(patentKeys(body).map(({ key, by, id }) => legalStatusRecord(context.seed, key, by, id))),
    p014BasicPatentDataPatentFamily: (body, context) =>
      json(patentKeys(body).map(({ key, by, id }) => familyRecord(context.seed, key, by, id))),
  };
}
