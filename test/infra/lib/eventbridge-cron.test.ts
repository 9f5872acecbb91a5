/**
 * The schedules' cron translation: for a table of croner expressions and time zones, the times
 * croner (the local scheduler) fires at are the times the translated expression fires at under
 * EventBridge Scheduler's documented grammar (support/eventbridge-cron-evaluator.ts); what the
 * grammar cannot say is refused naming the config entry. Times of day sit outside 01:00-03:59,
 * where the two services' daylight-saving rules (not the grammar) would decide.
 */
import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import {
  EVENTBRIDGE_CRON_GRAMMAR_URL,
  eventBridgeCron,
  UntranslatableCronError,
} from '../../../infra/lib/eventbridge-cron';
import { eventBridgeCronMatcher, eventBridgeNextFires } from '../support/eventbridge-cron-evaluator';

const FROM = Date.UTC(2026, 0, 5, 0, 0);
const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney'];
const WHERE = 'opflow.config.json: schedules[0].cron';

const EXPRESSIONS = [
  '*/20 * * * *',
  '5,35 * * * *',
  '0 */2 * * *',
  '15 9-17 * * *',
  '0 9 * * *',
  '0 9 * * 1-5',
  '0 9 * * MON-FRI',
  '0 9 * * mon,wed,fri',
  '0 9 * * 0',
  '0 9 * * 7',
  '0 9 * * 6-7',
  '0 9 * * */2',
  '0 9 * * 1-5/2',
  '0 9 * * 1#2',
  '0 9 * * FRI#5',
  '30 8 1,15 * *',
  '0 10 L * *',
  '0 10 15W * *',
  '0 10 1W * *',
  '0 10 */10 * *',
  '0 12 1 */3 *',
  '0 12 * JAN,JUL *',
  '0 0 9 * * 1',
  '0 0 12 1 * * 2026-2027',
  '@daily',
  '@weekly',
  '@monthly',
  '45 23 * * ?',
  '0 9 ? * 3',
];

describe('eventBridgeCron', () => {
  it('writes the forms that used to go wrong in EventBridge grammar', () => {
    expect(eventBridgeCron('0 9 * * */2', WHERE)).toBe('cron(0 9 ? * SUN,TUE,THU,SAT *)');
    expect(eventBridgeCron('0 9 * * 1#2', WHERE)).toBe('cron(0 9 ? * MON#2 *)');
    expect(eventBridgeCron('*/15 * * * *', WHERE)).toBe('cron(0/15 * * * ? *)');
    expect(eventBridgeCron('0 9 * * 1-5', WHERE)).toBe('cron(0 9 ? * MON-FRI *)');
    expect(eventBridgeCron('0 0 6 * * 0', WHERE)).toBe('cron(0 6 ? * SUN *)');
    expect(eventBridgeCron('0 9 * * 0,7', WHERE)).toBe('cron(0 9 ? * SUN *)');
    expect(eventBridgeCron('0 10 L * *', WHERE)).toBe('cron(0 10 L * ? *)');
  });

  describe.each(EXPRESSIONS)('%s', (expression) => {
    it.each(ZONES)('fires when croner does, in %s', (zone) => {
      const translated = eventBridgeCron(expression, WHERE);
      const count = 5;
      const croner = new Cron(expression, { timezone: zone, paused: true })
        .nextRuns(count, new Date(FROM))
        .map((date) => date.getTime());
      const eventBridge = eventBridgeNextFires(translated, zone, FROM, count);
      expect(
        eventBridge.map((at) => new Date(at).toISOString()),
        translated,
      ).toEqual(croner.map((at) => new Date(at).toISOString()));
    });
  });

  it.each([
    ['0 9 * * 5L', /"5L" \(croner: the last given weekday of the month\) has no form .*"FRI#4"/],
    ['0 9 * * FRIL', /"FRIL" \(croner: the last given weekday .*"FRI#4" .*"FRI#5"/],
    ['0 9 * * FRI#L', /"FRI#L" \(croner: the last given weekday .*"FRI#4"/],
    ['0 9 * * 5#L', /"5#L" .*"FRI#4"/],
    ['0 9 * * 0L', /"0L" .*"SUN#4"/],
    ['0 9 * * 7L', /"7L" .*"SUN#4"/],
    ['0 9 * * mon,5L', /"mon,5L" .*"FRI#4"/],
    ['0 9 * * 1-5L', /"1-5L" .*N#4 \(the fourth weekday N\)/],
    ['0 9 * * 1#2,3#4', /one N#K/],
    ['0 9 1 * 1', /both a day of the month and a day of the week/],
    ['0 12 1 * +MON', /"\+"/],
    ['30 0 9 * * *', /no seconds field/],
    ['0 9 LW * *', /L \(the last day\) or NW/],
    ['0 0 9 * * * 2300', /year 2300 is outside 1970-2199/],
    ['0 9 * *', /expected 5 fields/],
  ])('refuses %s, naming the entry', (expression, why) => {
    let error: unknown;
    try {
      eventBridgeCron(expression, WHERE);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UntranslatableCronError);
    expect((error as Error).message).toMatch(new RegExp(`^${WHERE.replace(/[.[\]]/g, '\\$&')}: "`));
    expect((error as Error).message).toMatch(why);
  });

  it('cites the documented grammar when it refuses a last weekday, and its nearest form is what it says', () => {
    let message = '';
    try {
      eventBridgeCron('0 9 * * 5L', WHERE);
    } catch (caught) {
      message = (caught as Error).message;
    }
    expect(message).toContain(EVENTBRIDGE_CRON_GRAMMAR_URL);
    expect(message).toContain('L alone is the last day of the week (Saturday)');
    // "FRI#4", as suggested: croner's last Friday in months with four Fridays, a week early in the others.
    for (const zone of ZONES) {
      const last = new Cron('0 9 * * 5L', { timezone: zone, paused: true }).nextRuns(12, new Date(FROM));
      const fourth = eventBridgeNextFires(eventBridgeCron('0 9 * * FRI#4', WHERE), zone, FROM, 12);
      last.forEach((lastFriday, index) => {
        // Whole days (a daylight-saving change may fall between the two).
        const gap = Math.round((lastFriday.getTime() - fourth[index]!) / 86_400_000);
        const fridays = Math.ceil(
          Number(lastFriday.toLocaleDateString('en-GB', { day: 'numeric', timeZone: zone })) / 7,
        );
        expect(gap, `${zone} ${lastFriday.toISOString()}`).toBe(fridays === 5 ? 7 : 0);
      });
    }
  });

  it('refuses an expression whose EventBridge form is over 256 characters', () => {
    // Odd minutes but 59, even hours but 22, every other year to 2100: lists, not start/increment.
    const minutes = Array.from({ length: 29 }, (_, i) => i * 2 + 1).join(',');
    const hours = Array.from({ length: 11 }, (_, i) => i * 2).join(',');
    const years = Array.from({ length: 38 }, (_, i) => 2026 + i * 2).join(',');
    expect(() => eventBridgeCron(`0 ${minutes} ${hours} 1 * * ${years}`, WHERE)).toThrow(
      /over the 256 allowed/,
    );
  });

  it('checks the evaluator against the grammar: refuses what EventBridge documents no form for', () => {
    for (const outside of [
      'cron(0 9 * * * *)',
      'cron(0 9 ? * ? *)',
      'cron(0 9 ? * 6L *)',
      'cron(0 9 ? * 1#2,3#1 *)',
      'cron(0 9 ? * 1/2 *)',
      'cron(0 9 ? * 0 *)',
      'cron(0 9 * * ?)',
    ]) {
      expect(() => eventBridgeCronMatcher(outside), outside).toThrow();
    }
  });
});
