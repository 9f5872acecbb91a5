/**
 * Seeded prior art: patent numbers, dates, organisations, IPC codes and references that look like
 * the platform's, all fictional.
 */
import type { SeededRandom } from './seeded';
import { capitalise } from './text-content';

export function patentNumber(random: SeededRandom): string {
  switch (random.int(0, 5)) {
    case 0:
      return `CN${random.digits(9)}${random.pick(['A', 'B'])}`;
    case 1:
      return `US${random.int(2015, 2024)}${random.digits(7)}A1`;
    case 2:
      return `US${random.digits(8)}B2`;
    case 3:
      return `EP${random.digits(7)}${random.pick(['A1', 'B1'])}`;
    case 4:
      return `WO${random.int(2015, 2024)}${random.digits(6)}A1`;
    default:
      return `JP${random.int(2015, 2024)}${random.digits(6)}A`;
  }
}

export function isoDate(random: SeededRandom, fromYear = 2012, toYear = 2024): string {
  const month = String(random.int(1, 12)).padStart(2, '0');
  const day = String(random.int(1, 28)).padStart(2, '0');
  return `${random.int(fromYear, toYear)}-${month}-${day}`;
}

const ORGANISATIONS = [
  ['Northbridge Materials Institute', 'Academy', 'United Kingdom'],
  ['Halvorsen Energy Systems AS', 'Company', 'Norway'],
  ['Kestrel Photonics Inc.', 'Company', 'United States'],
  ['Shenlan Advanced Manufacturing Co., Ltd.', 'Company', 'China'],
  ['Technische Hochschule Aurich', 'Academy', 'Germany'],
  ['Miyabi Electronics Corporation', 'Company', 'Japan'],
  ['Institut Lumière de Recherche', 'Academy', 'France'],
  ['Crestline Biotech LLC', 'Company', 'United States'],
] as const;

export function organisation(random: SeededRandom) {
  const [name, entityType, country] = random.pick(ORGANISATIONS);
  const id = random.hex(32);
  return {
    id,
    entity_id: id,
    name,
    display_name: name,
    name_en: name,
    entity_type: entityType,
    country_name: country,
    founded_date: Number(`${random.int(1950, 2015)}0101`),
  };
}

const IPC_CODES = [
  'H01M 10/0525',
  'H01M 4/36',
  'G06F 16/33',
  'G06N 3/08',
  'C08K 3/22',
  'A61K 8/27',
  'B60J 5/04',
  'H04M 1/725',
  'G06V 10/00',
  'C01G 9/02',
];

export function ipcCode(random: SeededRandom): string {
  return random.pick(IPC_CODES);
}

const TITLE_FORMS = [
  'Method and system for {k1} with improved {k2}',
  '{K1} device and manufacturing method thereof',
  'Composition comprising {k1} and use thereof for {k2}',
  'Apparatus for controlling {k1} based on {k2}',
  'High-performance {k1} structure and {k2} process',
];

export interface PriorArtReference {
  pn: string;
  title: string;
  apd: string;
  pbd: string;
  content: string;
  solution_id: string;
  solution_type: 'PATENT' | 'PAPER';
  org_info: ReturnType<typeof organisation>[];
}

/** One fictional reference about two of the keywords. */
export function priorArtReference(random: SeededRandom, keywords: readonly string[]): PriorArtReference {
  const [k1 = 'technology', k2 = 'performance'] = random.sample(
    keywords.length > 1 ? keywords : [...keywords, 'performance'],
    2,
  );
  const title = random
    .pick(TITLE_FORMS)
    .replace('{k1}', k1)
    .replace('{K1}', capitalise(k1))
    .replace('{k2}', k2);
  const apd = isoDate(random, 2012, 2022);
  return {
    pn: patentNumber(random),
    title,
    apd,
    pbd: isoDate(random, Number(apd.slice(0, 4)) + 1, 2024),
    content: `Discloses ${k1} arranged to improve ${k2}; the embodiments describe the process parameters and the measured effect.`,
    solution_id: random.uuid(),
    solution_type: random.chance(0.75) ? 'PATENT' : 'PAPER',
    org_info: [organisation(random)],
  };
}
