import { describe, expect, it } from 'vitest';
import { lenientBoolean, lenientInt, lenientNumber, lenientString } from '../../../shared/openplatform';

describe('lenient primitives', () => {
  it.each([
    [true, true],
    ['true', true],
    ['TRUE', true],
    [1, true],
    ['1', true],
    [false, false],
    ['false', false],
    [0, false],
    ['0', false],
  ])('lenientBoolean reads %j as %s', (value, expected) => {
    expect(lenientBoolean.parse(value)).toBe(expected);
  });

  it.each(['yes', '', null, 2, {}])('lenientBoolean refuses %j', (value) => {
    expect(lenientBoolean.safeParse(value).success).toBe(false);
  });

  it('lenientNumber and lenientInt accept numeric strings, not words or blanks', () => {
    expect(lenientNumber.parse('2.5')).toBe(2.5);
    expect(lenientInt.parse('67200002')).toBe(67200002);
    expect(lenientInt.safeParse('2.5').success).toBe(false);
    expect(lenientNumber.safeParse('').success).toBe(false);
    expect(lenientNumber.safeParse('ten').success).toBe(false);
  });

  it('lenientString accepts numbers and booleans as their text', () => {
    expect(lenientString.parse(1)).toBe('1');
    expect(lenientString.parse(false)).toBe('false');
    expect(lenientString.safeParse({}).success).toBe(false);
  });
});
