/** The trigger markers a caller puts in an input to make the sandbox fail on purpose. */
import { describe, expect, it } from 'vitest';
import { failsAt, mergeTriggers, triggersIn, withoutMarkers } from '../../../shared/sandbox/triggers';

describe('triggers', () => {
  it('finds markers anywhere in a body, case-insensitively', () => {
    const triggers = triggersIn({
      input: 'A lamp. [sandbox:fail:AI35-8]',
      nested: ['[Sandbox:No-Recommend]'],
    });
    expect([...triggers.failRefs]).toEqual(['ai35-8']);
    expect(triggers.failFirst).toBe(false);
    expect(triggers.noRecommend).toBe(true);
  });

  it('fails the first polled step on a bare marker, a named step on a named one', () => {
    const bare = triggersIn('x [sandbox:fail]');
    expect(failsAt(bare, 'ai35-2', 'ai35-2')).toBe(true);
    expect(failsAt(bare, 'ai35-8', 'ai35-2')).toBe(false);
    const named = triggersIn('x [sandbox:fail:ai35-8]');
    expect(failsAt(named, 'ai35-2', 'ai35-2')).toBe(false);
    expect(failsAt(named, 'ai35-8', 'ai35-2')).toBe(true);
    expect(failsAt(triggersIn('nothing here'), 'ai35-2', 'ai35-2')).toBe(false);
  });

  it('merges triggers and strips markers from text', () => {
    const merged = mergeTriggers(triggersIn('[sandbox:fail]'), triggersIn('[sandbox:fail:ai34-3]'));
    expect(merged.failFirst).toBe(true);
    expect([...merged.failRefs]).toEqual(['ai34-3']);
    expect(withoutMarkers('A lamp  [sandbox:fail:ai35-8] with a sensor.')).toBe('A lamp with a sensor.');
  });
});
