/**
 * An example input per workflow (shown by `opflow workflows <name>`), and one input every workflow
 * accepts (`examples/any-workflow.json`). test/unit/workflows/examples.test.ts checks each against
 * its workflow's schema, so they cannot go stale.
 */

const battery =
  'A solid-state lithium battery whose ceramic separator is reinforced by a woven glass-fibre mesh, so that the separator survives 500 charge cycles without cracking.';

/**
 * Accepted by every document workflow (the common field `text`, short enough for the strictest
 * limit); `call`, which calls any one operation, takes an operation and its body instead.
 */
export const anyWorkflowExample = { text: battery };

/** Workflows that take no document (so not examples/any-workflow.json). */
export const notDocumentWorkflows: readonly string[] = ['call'];

export const workflowExamples: Readonly<Record<string, Record<string, unknown>>> = {
  'novelty-check': {
    text: `${battery} The mesh is embedded during tape casting and sintered with the ceramic.`,
    title: 'Fibre-reinforced ceramic separator',
    lang: 'en',
    pbdStart: '2015-01-01',
  },
  'technical-disclosure': {
    text: `${battery} The mesh is embedded during tape casting and sintered with the ceramic.`,
    title: 'Fibre-reinforced ceramic separator',
    lang: 'en',
  },
  'find-solution': {
    text: 'Ceramic separators of solid-state batteries crack after a few hundred charge cycles.',
    lang: 'en',
  },
  'materials-find-solution': {
    text: 'A ceramic electrolyte for solid-state batteries that stays ion-conductive below -20 °C.',
    lang: 'en',
    nodes: 'none',
  },
  'pre-research-report': { text: 'What limits the cycle life of solid-state lithium batteries?' },
  'encyclopedia-qa': { text: 'Which biomarkers predict the response to PD-1 inhibitors?', deepSearch: false },
  'llm-chat': { text: 'Summarise the main failure modes of solid-state battery separators.', model: 'ai50' },
  'patent-count': { text: 'TTL:(solid-state battery) AND TACD:(separator)', collapseType: 'DOCDB' },
  call: {
    operation: 'p001',
    body: { query_text: 'TTL:(solid-state battery)', collapse_type: 'DOCDB' },
  },
};
