// The caps line of the Schedules and Webhooks pages: one text for both, each count with its plural.
import { describe, expect, it } from 'vitest';
import { capsText, formatTime } from '../../../dashboard/src/format';

describe('capsText', () => {
  it('says each cap and the spend against it, with the plural of each count', () => {
    expect(capsText({ maxUnitsPerRun: 8, spentLast24h: 3, jobsLast24h: 2 })).toBe(
      'Caps: 8 units a run · 3 units spent in the last 24 h',
    );
    expect(capsText({ maxUnitsPerRun: 1, maxUnitsPerDay: 1, spentLast24h: 0, jobsLast24h: 0 })).toBe(
      'Caps: 1 unit a run · 0 of 1 unit a day spent (last 24 h)',
    );
    expect(capsText({ maxUnitsPerDay: 12_000, spentLast24h: 1_500, jobsLast24h: 9 })).toBe(
      'Caps: 1,500 of 12,000 units a day spent (last 24 h)',
    );
  });

  it('says there is no cap when none is set, and the spend alone', () => {
    expect(capsText({ spentLast24h: 1, jobsLast24h: 1 })).toBe('No cap: 1 unit spent in the last 24 h');
    expect(capsText({ spentLast24h: 0, jobsLast24h: 0 })).toBe('No cap: 0 units spent in the last 24 h');
  });

  it('adds when a reached day cap frees, unless the page says it elsewhere', () => {
    const at = new Date(Date.now() + 3 * 3_600_000).toISOString();
    const caps = { maxUnitsPerDay: 12, spentLast24h: 14, jobsLast24h: 2, dayCapFreesAt: at };
    expect(capsText(caps)).toBe(
      `Caps: 14 of 12 units a day spent (last 24 h) · at the day cap until ${formatTime(at)}`,
    );
    expect(capsText(caps, { freesAt: false })).toBe('Caps: 14 of 12 units a day spent (last 24 h)');
  });
});
