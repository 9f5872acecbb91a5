/**
 * One input every document workflow accepts (`examples/any-workflow.json`): the common field
 * `text`, short enough for the strictest limit. A workflow that takes no document (`call`, which
 * calls any one operation) says so with `takesDocument: false`. Each workflow's own example is its
 * `example`; test/unit/workflows/examples.test.ts checks them all against the schemas.
 */
export const anyWorkflowExample = {
  text: 'A solid-state lithium battery whose ceramic separator is reinforced by a woven glass-fibre mesh, so that the separator survives 500 charge cycles without cracking.',
};
