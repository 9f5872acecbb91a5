/**
 * When an EventBridge Scheduler `cron(...)` expression fires, read from the grammar AWS documents
 * (EventBridge User Guide, "Cron expressions reference"), not from any scheduler library:
 *
 * | field        | values          | wildcards       |
 * | ------------ | --------------- | --------------- |
 * | minutes      | 0-59            | , - * /         |
 * | hours        | 0-23            | , - * /         |
 * | day-of-month | 1-31            | , - * ? / L W   |
 * | month        | 1-12 or JAN-DEC | , - * /         |
 * | day-of-week  | 1-7 or SUN-SAT  | , - * ? L #     |
 * | year         | 1970-2199       | , - * /         |
 *
 * `/` is `start/increment`; `?` is "any" and one of day-of-month and day-of-week must be `?` (both
 * cannot be given); `L` is the last day of the month or of the week (Saturday); `NW` is the weekday
 * nearest day N, within the month; `N#K` is the Kth weekday N of the month, and is then the only
 * expression of the field. Anything else is refused, so an expression outside the grammar fails
 * the test instead of being read generously. Times are wall-clock times in the schedule's zone.
 */

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

type Matcher = (value: number) => boolean;

interface Spec {
  min: number;
  max: number;
  names?: readonly string[];
}

function number(text: string, spec: Spec): number {
  const named = spec.names?.indexOf(text) ?? -1;
  if (named >= 0) return named + 1;
  if (!/^\d+$/.test(text)) throw new Error(`"${text}" is not a value`);
  const value = Number(text);
  if (value < spec.min || value > spec.max) throw new Error(`${value} is outside ${spec.min}-${spec.max}`);
  return value;
}

/** A field of values, ranges, `start/increment` and `*`, as a set. */
function plainField(field: string, spec: Spec, allowStep: boolean): Set<number> | '*' {
  if (field === '*') return '*';
  const values = new Set<number>();
  for (const part of field.split(',')) {
    const step = /^(\d+|[A-Z]{3})\/(\d+)$/.exec(part);
    if (step) {
      if (!allowStep) throw new Error(`"/" is not a wildcard of this field: ${part}`);
      const increment = Number(step[2]);
      if (increment < 1) throw new Error(`bad increment: ${part}`);
      for (let v = number(step[1]!, spec); v <= spec.max; v += increment) values.add(v);
      continue;
    }
    const range = /^(\d+|[A-Z]{3})-(\d+|[A-Z]{3})$/.exec(part);
    if (range) {
      const from = number(range[1]!, spec);
      const to = number(range[2]!, spec);
      if (from > to) throw new Error(`backward range: ${part}`);
      for (let v = from; v <= to; v++) values.add(v);
      continue;
    }
    values.add(number(part, spec));
  }
  return values;
}

function matcherOf(set: Set<number> | '*'): Matcher {
  return set === '*' ? () => true : (value) => set.has(value);
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
/** 1 (Sunday) to 7 (Saturday), EventBridge's numbering. */
const weekdayOf = (year: number, month: number, day: number) =>
  new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

type DayMatcher = (t: LocalTime) => boolean;

function dayOfMonthMatcher(field: string): DayMatcher {
  if (field === 'L') return (t) => t.day === daysIn(t.year, t.month);
  const nearest = /^(\d+)W$/.exec(field);
  if (nearest) {
    const target = number(nearest[1]!, { min: 1, max: 31 });
    return (t) => {
      const last = daysIn(t.year, t.month);
      const n = Math.min(target, last);
      const weekday = weekdayOf(t.year, t.month, n);
      let day = n;
      if (weekday === 7) day = n === 1 ? n + 2 : n - 1; // Saturday: Friday before, or Monday after the 1st
      if (weekday === 1) day = n === last ? n - 2 : n + 1; // Sunday: Monday after, or Friday before the last
      return t.day === day;
    };
  }
  if (/[LW]/.test(field)) throw new Error(`day-of-month: L and W stand alone (${field})`);
  const days = matcherOf(plainField(field, { min: 1, max: 31 }, true));
  return (t) => days(t.day);
}

function dayOfWeekMatcher(field: string): DayMatcher {
  if (field.includes('#')) {
    const nth = /^(\d|[A-Z]{3})#([1-5])$/.exec(field);
    if (!nth) throw new Error(`day-of-week: one N#K only (${field})`);
    const weekday = number(nth[1]!, { min: 1, max: 7, names: WEEKDAYS });
    const k = Number(nth[2]);
    return (t) => weekdayOf(t.year, t.month, t.day) === weekday && Math.ceil(t.day / 7) === k;
  }
  if (field === 'L') return (t) => weekdayOf(t.year, t.month, t.day) === 7;
  if (field.includes('L')) throw new Error(`day-of-week: L stands alone (${field})`);
  const weekdays = matcherOf(plainField(field, { min: 1, max: 7, names: WEEKDAYS }, false));
  return (t) => weekdays(weekdayOf(t.year, t.month, t.day));
}

/** Whether a wall-clock time matches an EventBridge `cron(...)` expression; throws outside the grammar. */
export function eventBridgeCronMatcher(expression: string): (t: LocalTime) => boolean {
  const inner = /^cron\((.*)\)$/.exec(expression)?.[1];
  if (inner === undefined) throw new Error(`not cron(...): ${expression}`);
  const fields = inner.split(' ');
  if (fields.length !== 6) throw new Error(`cron needs 6 fields: ${expression}`);
  const [minute, hour, dom, month, dow, year] = fields as [string, string, string, string, string, string];
  if ((dom === '?') === (dow === '?'))
    throw new Error(`exactly one of day-of-month and day-of-week is "?": ${expression}`);
  const minutes = matcherOf(plainField(minute, { min: 0, max: 59 }, true));
  const hours = matcherOf(plainField(hour, { min: 0, max: 23 }, true));
  const months = matcherOf(plainField(month, { min: 1, max: 12, names: MONTHS }, true));
  const years = matcherOf(plainField(year, { min: 1970, max: 2199 }, true));
  const days = dom === '?' ? dayOfWeekMatcher(dow) : dayOfMonthMatcher(dom);
  return (t) => minutes(t.minute) && hours(t.hour) && months(t.month) && years(t.year) && days(t);
}

function localFields(format: Intl.DateTimeFormat, at: number): LocalTime {
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  return {
    year: Number(parts['year']),
    month: Number(parts['month']),
    day: Number(parts['day']),
    hour: Number(parts['hour']),
    minute: Number(parts['minute']),
  };
}

/**
 * The next `count` times after `from` (ms) at which `expression` fires in `timeZone`, scanning
 * minute by minute up to `horizonDays` ahead (fewer when the horizon comes first).
 */
export function eventBridgeNextFires(
  expression: string,
  timeZone: string,
  from: number,
  count: number,
  horizonDays = 800,
): number[] {
  const matches = eventBridgeCronMatcher(expression);
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const fires: number[] = [];
  const hour = 3_600_000;
  const end = from + horizonDays * 86_400_000;
  // Zone offsets change on UTC hour or half-hour boundaries, so one lookup per UTC half hour is exact.
  for (let start = Math.floor(from / (hour / 2)) * (hour / 2); start < end; start += hour / 2) {
    const local = localFields(format, start);
    const base = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
    for (let m = 0; m < 30; m++) {
      const at = start + m * 60_000;
      if (at <= from) continue;
      const wall = new Date(base + m * 60_000);
      const t = {
        year: wall.getUTCFullYear(),
        month: wall.getUTCMonth() + 1,
        day: wall.getUTCDate(),
        hour: wall.getUTCHours(),
        minute: wall.getUTCMinutes(),
      };
      if (matches(t)) {
        fires.push(at);
        if (fires.length === count) return fires;
      }
    }
  }
  return fires;
}
