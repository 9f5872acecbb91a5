/**
 * The FTO search's `comparePatents`: the numbers it takes (normalised, each once, at most five,
 * publication numbers only), the places they leave in the report's selection, the steps they leave
 * out, and a compared patent read for the report (matches by the threshold, risk from the matches).
 */
import { describe, expect, it } from 'vitest';
import { stepsLeftOut } from '../../../shared/engine';
import { addedPatent } from '../../../shared/workflows/fto/compare';
import { fto } from '../../../shared/workflows/fto/workflow';
import { contextFor, decideOf, inputProblems, parsedInput } from './fixtures';

const product = { text: 'A drone battery latch with a spring-loaded pawl.' };
const agentAnswer = {
  task_status: 'success',
  final_result: [
    { patent_id: 'US11111111B2', risk_level: 'High' },
    { patent_id: 'EP2222222B1', risk_level: 'Low' },
  ],
};

describe('fto: comparePatents', () => {
  it('takes publication numbers, as a list or one string, upper-cased and each once', () => {
    expect(
      parsedInput(fto, { ...product, comparePatents: 'cn118289111a; US11234567B2, CN118289111A' }),
    ).toMatchObject({
      comparePatents: ['CN118289111A', 'US11234567B2'],
    });
  });

  it('refuses what is not a publication number, an empty list and more than five, naming the field', () => {
    expect(inputProblems(fto, { ...product, comparePatents: ['the latch patent'] })[0]).toMatch(
      /^comparePatents\.0: comparePatents: each is a publication number/,
    );
    expect(inputProblems(fto, { ...product, comparePatents: [] })[0]).toMatch(/name at least one patent/);
    const six = ['CN1A', 'CN2A', 'CN3A', 'CN4A', 'CN5A', 'CN6A'];
    expect(inputProblems(fto, { ...product, comparePatents: six })[0]).toMatch(/at most 5 patents/);
  });

  it('leaves the comparison steps without a patent out, saying why', () => {
    const none = contextFor(fto, product, { context: {} });
    expect(Object.keys(stepsLeftOut(fto, none))).toEqual([
      'compare-patent-1',
      'compare-patent-2',
      'compare-patent-3',
      'compare-patent-4',
      'compare-patent-5',
    ]);
    expect(stepsLeftOut(fto, none)['compare-patent-1']).toBe('no "comparePatents" given');
    const two = contextFor(fto, { ...product, comparePatents: ['CN1A', 'CN2A'] }, { context: {} });
    expect(stepsLeftOut(fto, two)).toEqual({
      'compare-patent-3': '"comparePatents" names 2 patents',
      'compare-patent-4': '"comparePatents" names 2 patents',
      'compare-patent-5': '"comparePatents" names 2 patents',
    });
  });

  it('offers the report the places the compared patents leave, and goes on without a selection when none is left', () => {
    const two = contextFor(
      fto,
      { ...product, comparePatents: ['CN1A', 'CN2A', 'CN3A'] },
      { context: { taskId: 't', comparedPatents: [0, 2] } },
    );
    expect(decideOf(fto, 'agent-result', agentAnswer, two)).toMatchObject({
      type: 'select',
      offer: { max: 3 },
    });
    const five = ['CN1A', 'CN2A', 'CN3A', 'CN4A', 'CN5A'];
    const full = contextFor(
      fto,
      { ...product, comparePatents: five },
      { context: { taskId: 't', comparedPatents: [0, 1, 2, 3, 4] } },
    );
    expect(decideOf(fto, 'agent-result', agentAnswer, full)).toEqual({ type: 'next' });
    const nothingFound = { task_status: 'success', final_result: [] };
    expect(decideOf(fto, 'agent-result', nothingFound, two)).toEqual({ type: 'next' });
    const alone = contextFor(fto, product, { context: { taskId: 't' } });
    expect(decideOf(fto, 'agent-result', nothingFound, alone)).toEqual({ type: 'complete' });
    // Named, but no comparison came back: nothing to report on, so no ai66-6 call that cannot help.
    const noneCompared = contextFor(fto, { ...product, comparePatents: five }, { context: { taskId: 't' } });
    expect(decideOf(fto, 'agent-result', nothingFound, noneCompared)).toEqual({ type: 'complete' });
    expect(decideOf(fto, 'agent-result', agentAnswer, noneCompared)).toMatchObject({
      type: 'select',
      offer: { max: 5 },
    });
  });

  it('reads a compared patent: elements match from the threshold, the risk from how many match', () => {
    const compared = {
      patent_id: 'CN118289111A',
      claims: [{ claim_num: 1, claim_text: 'A latch comprising a pawl and a lever.' }],
      features: [
        { tech_feature: 'a pawl', comparison_feature: 'spring-loaded pawl', score: 82 },
        { tech_feature: 'a lever', comparison_feature: 'release lever', score: 40 },
      ],
      public_score: 61,
    };
    const patent = addedPatent(compared, 75, 'CN118289111A');
    expect(patent).toMatchObject({
      patent_id: 'CN118289111A',
      user_added: true,
      risk_level: 'Medium',
      feature_match_num: 1,
    });
    expect(patent.features?.map((feature) => feature?.similar)).toEqual([true, false]);
    expect(addedPatent(compared, 30, 'CN118289111A').risk_level).toBe('High');
    expect(addedPatent(compared, 90, 'CN118289111A').risk_level).toBe('Low');
  });
});
