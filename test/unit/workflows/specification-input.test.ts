import { beforeAll, describe, expect, it } from 'vitest';
import { disclosureInput, loadDisclosureParsers } from '../../../shared/ingest/disclosure-form';
import { workflows } from '../../../shared/workflows';
import { specificationFromText } from '../../../shared/workflows/specification-drafting/input';

const claims =
  '1. A helmet comprising six rigid shell segments; and textile hinges joining them.\n2. The helmet of claim 1, wherein a magnetic buckle locks the segments open.';

describe('a Markdown document as a specification drafting input', () => {
  beforeAll(() => loadDisclosureParsers());

  it('takes the Claims section as the claims, the rest as the disclosure, the first heading as the title', () => {
    expect(
      specificationFromText(
        `# Folding helmet\n\n## Solution\nSix segments fold flat.\n\n## Claims\n${claims}\n\n## Drawings\nFig. 1.`,
        'helmet.md',
      ),
    ).toEqual({
      title: 'Folding helmet',
      claims,
      disclosure: '## Solution\nSix segments fold flat.\n\n## Drawings\nFig. 1.',
    });
  });

  it('never takes the Claims heading as the title (a form read apart from its front matter starts with the body)', () => {
    expect(specificationFromText(`Six segments fold flat.\n\n## Claims\n${claims}\n`, 'DRN-22.md')).toEqual({
      title: 'DRN-22',
      claims,
      disclosure: 'Six segments fold flat.',
    });
  });

  it('a disclosure form whose body is one paragraph then the Claims keeps its claims and its heading as the title', () => {
    const workflow = workflows.get('specification-drafting')!;
    const { input, metadata } = disclosureInput(
      workflow,
      `# Folding helmet hinge\n\nDocket: DRN-2026-022\nInventors: Jane Roe\n\nSix rigid shell segments fold flat.\n\n## Claims\n${claims}\n`,
      'hinge.md',
    );
    expect(input).toEqual({
      title: 'Folding helmet hinge',
      disclosure: 'Six rigid shell segments fold flat.',
      claims,
    });
    expect(metadata).toMatchObject({ docket: 'DRN-2026-022', inventors: ['Jane Roe'] });
    expect(workflow.input.safeParse(input).success).toBe(true);
  });

  it('without a Claims section, the whole body is the disclosure (and the claims are asked for)', () => {
    const input = specificationFromText('# A loose idea\n\nA helmet that folds, somehow.', 'idea.md');
    expect(input).toEqual({ title: 'A loose idea', disclosure: 'A helmet that folds, somehow.' });
    const refused = workflows.get('specification-drafting')!.input.safeParse(input);
    expect(refused.error?.issues[0]?.message).toContain('claims: the claims are required');
  });
});
