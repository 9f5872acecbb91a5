/**
 * Simple bibliography, p011: the bibliographic record of each patent asked for (up to 100,
 * comma-separated), by publication number (`patent_number`) or patent id (`patent_id`). The record
 * follows from the run's seed and the number alone, so the same patent always has the same title,
 * assignee and dates; a publication number's year (`US2019…`, `WO2017…`) is its publication year.
 * A `patent_number` that is not shaped like a publication number is not known: it is left out, as
 * the platform leaves out what it does not find.
 */
import type { DataOf } from '../../openplatform/schemas/responses';
import { organisation } from '../prior-art';
import { SeededRandom } from '../seeded';
import { capitalise } from '../text-content';
import { json, type OperationHandlers } from './contract';

type BibliographyRecord = NonNullable<DataOf<'p011BasicPatentDataSimpleBibliography'>>[number];

/** `CN112345678A`, `US2019012345A1`, `EP1234567B1`: country, number, kind. */
const PUBLICATION_NUMBER = /^([A-Z]{2})(\d[\dA-Z]*?)([A-Z]\d?)$/;

const SUBJECTS = [
  'coating',
  'electrode',
  'sensor array',
  'heat exchanger',
  'polymer film',
  'battery module',
  'optical layer',
  'control circuit',
  'catalyst',
  'membrane',
];
const PURPOSES = [
  'self-cleaning surfaces',
  'thermal management',
  'energy storage',
  'wear resistance',
  'signal processing',
  'corrosion protection',
  'low-temperature operation',
  'light transmission',
];
const TITLE_FORMS = [
  '{S} for {P} and method for producing the same',
  'Method and system using a {s} for {P}',
  '{S} with improved {p}',
  'Apparatus comprising a {s} for {p}',
];

const day = (random: SeededRandom, year: number) =>
  year * 10_000 + random.int(1, 12) * 100 + random.int(1, 28);

/** The YYYYMMDD date `days` before `date` (YYYYMMDD). */
function daysBefore(date: number, days: number): number {
  const at = new Date(Date.UTC(Math.floor(date / 10_000), (Math.floor(date / 100) % 100) - 1, date % 100));
  at.setUTCDate(at.getUTCDate() - days);
  return at.getUTCFullYear() * 10_000 + (at.getUTCMonth() + 1) * 100 + at.getUTCDate();
}

/** The record of one patent, from the seed and its number (or id) alone. */
export function bibliographyRecord(seed: number, key: string, by: 'number' | 'id'): BibliographyRecord {
  const random = SeededRandom.from(seed, 'p011', key);
  const parsed = by === 'number' ? PUBLICATION_NUMBER.exec(key) : null;
  const country = parsed?.[1] ?? random.pick(['CN', 'US', 'EP', 'JP']);
  const docNumber = parsed?.[2] ?? random.digits(9);
  const kind = parsed?.[3] ?? random.pick(['A', 'B1', 'A1']);
  const yearInNumber = /^(20[0-4]\d)\d{5,}/.exec(docNumber)?.[1];
  const published = yearInNumber ? Number(yearInNumber) : random.int(2014, 2024);
  const filed = published - random.int(1, 3);
  const application = day(random, filed);
  // A priority claimed up to a year before the filing, or the filing itself.
  const priority = random.chance(0.6) ? daysBefore(application, random.int(30, 365)) : application;
  const [subject = 'device', purpose = 'performance'] = [random.pick(SUBJECTS), random.pick(PURPOSES)];
  const title = random
    .pick(TITLE_FORMS)
    .replace('{S}', capitalise(subject))
    .replace('a {s}', `${/^[aeiou]/.test(subject) ? 'an' : 'a'} ${subject}`)
    .replace('{s}', subject)
    .replace('{P}', purpose)
    .replace('{p}', purpose);
  const owner = organisation(random);
  const inventors = Array.from({ length: random.int(1, 3) }, (_, index) => ({
    lang: 'EN',
    name: `${random.pick(['A.', 'B.', 'C.', 'L.', 'M.', 'S.'])} ${random.pick(['Berger', 'Chen', 'Okafor', 'Sato', 'Lindqvist', 'Moreau'])}`,
    sequence: index + 1,
  }));
  return {
    pn: `${country}${docNumber}${kind}`,
    patent_id: by === 'id' ? key : random.uuid(),
    bibliographic_data: {
      patent_type: kind.startsWith('B') ? 'PATENT' : 'APPLICATION',
      invention_title: [{ lang: 'EN', text: title }],
      abstracts: [
        {
          lang: 'EN',
          text: `${capitalise(title)}. The ${subject} is arranged for ${purpose}; the embodiments give the process parameters and the measured effect.`,
        },
      ],
      parties: {
        applicants: [{ lang: 'EN', name: owner.name, address: owner.country_name, sequence: 1 }],
        assignees: [{ lang: 'EN', name: owner.name, address: owner.country_name, sequence: 1 }],
        inventors,
      },
      application_reference: { apno: `${country}${filed}${random.digits(7)}`, date: application },
      publication_reference: { country, doc_number: docNumber, kind, date: day(random, published) },
      priority_claims: [{ country, doc_number: `${filed}${random.digits(6)}`, date: priority }],
    },
  };
}

const listOf = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** Whether `text` is shaped like a publication number (`CN112345678A`). */
export const isPublicationNumber = (text: string) => PUBLICATION_NUMBER.test(text);

/**
 * The patents a Patent Basic Data query names (p011, p014, p041), each once: publication numbers
 * the sandbox can read (others are not known, so left out, as the platform leaves out what it does
 * not find), then patent ids (an id that is a publication number, as the sandbox's searches give,
 * is that patent's).
 */
export function patentKeys(query: {
  patent_number?: string | undefined;
  patent_id?: string | undefined;
}): { key: string; by: 'number' | 'id'; id?: string }[] {
  return [
    ...listOf(query.patent_number)
      .filter(isPublicationNumber)
      .map((key) => ({ key, by: 'number' as const })),
    ...listOf(query.patent_id).map((id) => ({
      key: id,
      by: isPublicationNumber(id) ? ('number' as const) : ('id' as const),
      id,
    })),
  ];
}

export function createBibliographyOperations(): Pick<
  OperationHandlers,
  'p011BasicPatentDataSimpleBibliography'
> {
  return {
    p011BasicPatentDataSimpleBibliography: (body, context) =>
      json(
        patentKeys(body).map(({ key, by, id }) => ({
          ...bibliographyRecord(context.seed, key, by),
          ...(id === undefined ? {} : { patent_id: id }),
        })),
      ),
  };
}
