/**
 * A schedule's croner expression (opflow.config.json, the local scheduler's syntax) as an EventBridge
 * Scheduler `cron(minutes hours day-of-month month day-of-week year)` that fires at the same times.
 * Each field is read into the set of values it names and written back in the documented EventBridge
 * grammar (weekdays 1-7 from Sunday, written as names; `?` in the day field not used; `L` and `W`
 * in the day of the month, one `#` in the day of the week). What EventBridge's grammar cannot say is
 * refused with a message naming the config entry, never translated into something else.
 */

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** croner's nicknames, as the patterns croner reads them as. */
const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** EventBridge Scheduler refuses an expression longer than this (ScheduleExpression, 1 to 256 characters). */
export const EVENTBRIDGE_EXPRESSION_MAX_LENGTH = 256;

/** A croner expression EventBridge Scheduler cannot express; the message names the config entry. */
export class UntranslatableCronError extends Error {
  override readonly name = 'UntranslatableCronError';
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** The value names[0] stands for (months: 1; weekdays: 0). */
  namesFrom?: number;
}

const FIELDS = {
  minute: { name: 'minute', min: 0, max: 59 },
  hour: { name: 'hour', min: 0, max: 23 },
  day: { name: 'day of the month', min: 1, max: 31 },
  month: { name: 'month', min: 1, max: 12, names: MONTHS, namesFrom: 1 },
  // croner: 0-7, 0 and 7 both Sunday.
  weekday: { name: 'day of the week', min: 0, max: 7, names: WEEKDAYS, namesFrom: 0 },
  year: { name: 'year', min: 1970, max: 2199 },
} satisfies Record<string, FieldSpec>;

/** One value of a field: a number in range or a name (JAN, MON). */
function fieldValue(text: string, spec: FieldSpec, fail: (why: string) => never): number {
  const upper = text.toUpperCase();
  const named = spec.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + (spec.namesFrom ?? 0);
  if (!/^\d+$/.test(text)) fail(`"${text}" is not a ${spec.name}`);
  const value = Number(text);
  if (value < spec.min || value > spec.max) fail(`${spec.name} ${value} is outside ${spec.min}-${spec.max}`);
  return value;
}

/**
 * The values a plain field names (`*`, `?`, `5`, `1-5`, `*\/15`, `10-40/10`, lists of these), or
 * undefined for a wildcard.
 */
function valuesOf(field: string, spec: FieldSpec, fail: (why: string) => never): Set<number> | undefined {
  if (field === '*' || field === '?') return undefined;
  const values = new Set<number>();
  for (const part of field.split(',')) {
    const match = /^([^/]+)(?:\/(\d+))?$/.exec(part);
    if (!match) fail(`"${part}" is not a value, a range or a step`);
    const [, range, stepText] = match as unknown as [string, string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) fail(`the step of "${part}" must be at least 1`);
    let from: number;
    let to: number;
    if (range === '*' || range === '?') {
      from = spec.min;
      to = spec.max;
    } else if (range.includes('-')) {
      const [a, b, ...rest] = range.split('-');
      if (rest.length > 0 || a === undefined || b === undefined) fail(`"${part}" is not a range`);
      from = fieldValue(a, spec, fail);
      to = fieldValue(b, spec, fail);
      if (from > to) fail(`the range "${part}" runs backwards`);
    } else {
      from = fieldValue(range, spec, fail);
      // croner allows a step only from `*` or a range.
      if (stepText !== undefined) fail(`"${part}": a step needs "*" or a range before it`);
      to = from;
    }
    for (let value = from; value <= to; value += step) values.add(value);
  }
  return values;
}

/**
 * A set of values in EventBridge's grammar: `*` for all of them, `start/step` for a progression to
 * the end of the field, else a list of values and ranges.
 */
function written(values: Set<number> | undefined, spec: FieldSpec, name?: (value: number) => string): string {
  const sorted = values ? [...values].sort((a, b) => a - b) : [];
  if (!values || sorted.length === spec.max - spec.min + 1) return '*';
  const show = name ?? String;
  const [first, second] = sorted as [number, number | undefined];
  if (second !== undefined && sorted.length > 2 && name === undefined) {
    const step = second - first;
    const progression = sorted.every((value, index) => value === first + index * step);
    if (progression && sorted.at(-1)! + step > spec.max) return `${first}/${step}`;
  }
  const parts: string[] = [];
  for (let index = 0; index < sorted.length; ) {
    let end = index;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end]! + 1) end++;
    const a = sorted[index]!;
    const b = sorted[end]!;
    if (b - a >= 2) parts.push(`${show(a)}-${show(b)}`);
    else for (let k = index; k <= end; k++) parts.push(show(sorted[k]!));
    index = end + 1;
  }
  return parts.join(',');
}

/** The day-of-month field: a plain field, `L` (last day) or `NW` (weekday nearest the Nth). */
function dayField(field: string, fail: (why: string) => never): string | undefined {
  const upper = field.toUpperCase();
  if (upper === 'L') return 'L';
  const nearest = /^(\d+)W$/.exec(upper);
  if (nearest) return `${fieldValue(nearest[1]!, FIELDS.day, fail)}W`;
  if (/[LW]/.test(upper)) {
    fail(
      `"${field}": EventBridge's day of the month takes L (the last day) or NW (the weekday nearest day N) alone, ` +
        'not combined with other values',
    );
  }
  const values = valuesOf(field, FIELDS.day, fail);
  return values === undefined ? undefined : written(values, FIELDS.day);
}

/**
 * Where EventBridge Scheduler documents its cron grammar: the day-of-week field takes 1-7 or SUN-SAT
 * with `, - * ? L #`, and "the L wildcard in the Day-of-month or Day-of-week fields specifies the
 * last day of the month or week" (the same in EventBridge's cron reference,
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-cron-expressions.html). Neither gives
 * `<d>L` (the last given weekday of the month, as croner and Quartz read it) a meaning or an example
 * (`6L` examples are Quartz's), so it is refused rather than deployed on trust.
 */
export const EVENTBRIDGE_CRON_GRAMMAR_URL =
  'https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#cron-based';

/**
 * The refusal of croner's "last <weekday> of the month" (`5L`, `FRIL`, `5#L`, `FRI#L`, in a list
 * or not): it cites the documented grammar and names, for the first such weekday, the nearest forms
 * EventBridge can say.
 */
function lastWeekdayRefusal(field: string): string {
  const upper = field.toUpperCase();
  const term = upper.split(',').find((part) => /L$/.test(part));
  const weekdayText = term === undefined ? undefined : /^([A-Z]{3}|\d)#?L$/.exec(term)?.[1];
  const index =
    weekdayText === undefined
      ? -1
      : /^\d$/.test(weekdayText)
        ? Number(weekdayText) % 7
        : WEEKDAYS.indexOf(weekdayText);
  const name = index >= 0 ? WEEKDAYS[index] : undefined;
  const nearest =
    name === undefined
      ? 'N#4 (the fourth weekday N) or N#5 (a fifth one, in the months that have it)'
      : `"${name}#4" (the fourth ${name}: the last in months with four, a week early in months with five) ` +
        `or "${name}#5" (the fifth, only in months that have one)`;
  return (
    `"${field}" (croner: the last given weekday of the month) has no form in EventBridge Scheduler's ` +
    'documented cron grammar: its day of the week takes 1-7 or SUN-SAT with , - * ? L #, where L alone ' +
    `is the last day of the week (Saturday) (${EVENTBRIDGE_CRON_GRAMMAR_URL}). ` +
    `Nearest forms: ${nearest}; or "L" in the day of the month (the month's last day)`
  );
}

/** The day-of-week field: a plain field as names, or one `N#K` (the Kth weekday N of the month). */
function weekdayField(field: string, fail: (why: string) => never): string | undefined {
  const upper = field.toUpperCase();
  if (upper.startsWith('+')) {
    fail('"+" (day of the month AND day of the week) has no EventBridge form: use one of the two');
  }
  if (upper.includes('L')) fail(lastWeekdayRefusal(field));
  if (upper.includes('#')) {
    const nth = /^([A-Z]+|\d+)#([1-5])$/.exec(upper);
    if (!nth) {
      fail(
        `"${field}": EventBridge takes one N#K in the day of the week (K 1 to 5), not a list or a range of them`,
      );
    }
    const weekday = fieldValue(nth[1]!, FIELDS.weekday, fail) % 7;
    return `${WEEKDAYS[weekday]}#${nth[2]}`;
  }
  const values = valuesOf(field, FIELDS.weekday, fail);
  if (values === undefined) return undefined;
  // croner's 7 is Sunday, as 0 is; EventBridge has no step here, so the set is written as names.
  const days = new Set([...values].map((value) => value % 7));
  return written(days, { ...FIELDS.weekday, max: 6 }, (value) => WEEKDAYS[value]!);
}

/**
 * The EventBridge Scheduler expression of a croner expression (5 fields, 6 with seconds 0, 7 with
 * a year, or a nickname such as `@daily`). Throws {@link UntranslatableCronError} naming `where`
 * (e.g. `opflow.config.json: schedules[0].cron`) for what EventBridge cannot express: seconds
 * other than 0, both a day of the month and a day of the week (croner fires on either), the last
 * given weekday of a month, several `#` terms, a year outside 1970-2199, an expression over 256
 * characters.
 */
export function eventBridgeCron(cron: string, where: string): string {
  const fail = (why: string): never => {
    throw new UntranslatableCronError(`${where}: "${cron}" cannot run on EventBridge Scheduler: ${why}`);
  };
  const text = cron.trim();
  let fields = (NICKNAMES[text.toLowerCase()] ?? text).split(/\s+/);
  if (fields.length === 6 || fields.length === 7) {
    const seconds = fields[0]!;
    if (seconds !== '0' && seconds !== '00') fail('EventBridge has no seconds field; use 0 seconds');
    fields = fields.slice(1);
  }
  if (fields.length !== 5 && fields.length !== 6) {
    fail('expected 5 fields (minute hour day month weekday), 6 with seconds or 7 with a year');
  }
  const [minute, hour, day, month, weekday, year = '*'] = fields as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  const days = dayField(day, fail);
  const weekdays = weekdayField(weekday, fail);
  if (days !== undefined && weekdays !== undefined) {
    fail(
      'it names both a day of the month and a day of the week (croner runs on either); ' +
        'EventBridge takes one of the two: make two schedules',
    );
  }
  const expression =
    `cron(${written(valuesOf(minute, FIELDS.minute, fail), FIELDS.minute)} ` +
    `${written(valuesOf(hour, FIELDS.hour, fail), FIELDS.hour)} ` +
    `${days ?? (weekdays === undefined ? '*' : '?')} ` +
    `${written(valuesOf(month, FIELDS.month, fail), FIELDS.month)} ` +
    `${weekdays ?? '?'} ` +
    `${written(valuesOf(year, FIELDS.year, fail), FIELDS.year)})`;
  if (expression.length > EVENTBRIDGE_EXPRESSION_MAX_LENGTH) {
    fail(
      `its EventBridge form takes ${expression.length} characters, over the ${EVENTBRIDGE_EXPRESSION_MAX_LENGTH} allowed`,
    );
  }
  return expression;
}
