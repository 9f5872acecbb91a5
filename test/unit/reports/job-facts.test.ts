/** The cost line at the top of every report, and where it goes. */
import { describe, expect, it } from 'vitest';
import { costLine, withLineAfterLead } from '../../../shared/reports/job-facts';
import { makeJob } from '../../support/factories';

describe('costLine', () => {
  it('says calls, failed calls, units billed and the platform’s task_cost', () => {
    const usage = makeJob().usage;
    expect(costLine(makeJob({ usage: { ...usage, calls: 1, failedCalls: 0, billedUnits: 1 } }))).toBe(
      '**Cost:** 1 call · 1 unit billed',
    );
    expect(
      costLine(
        makeJob({ usage: { ...usage, calls: 1204, failedCalls: 2, billedUnits: 15_300, taskCost: 95 } }),
      ),
    ).toBe('**Cost:** 1,204 calls (2 failed) · 15,300 units billed · platform task_cost 95 s (1.6 min)');
  });
});

describe('withLineAfterLead', () => {
  it('puts the line after the text under the title, before the first section', () => {
    expect(withLineAfterLead('# T\n\nverdict\n\n## A\n\na\n', 'L')).toBe(
      '# T\n\nverdict\n\nL\n\n## A\n\na\n',
    );
  });
  it('puts it after the first section when the report opens with its verdict as a section', () => {
    expect(withLineAfterLead('# T\n\n## Conclusion\n\nc\n\n## B\n\nb\n', 'L')).toBe(
      '# T\n\n## Conclusion\n\nc\n\nL\n\n## B\n\nb\n',
    );
  });
  it('puts it at the end when there is no section to come before', () => {
    expect(withLineAfterLead('# T\n\ncount\n', 'L')).toBe('# T\n\ncount\n\nL\n');
    expect(withLineAfterLead('# T\n\n## Only\n\nx\n', 'L')).toBe('# T\n\n## Only\n\nx\n\nL\n');
  });
});
