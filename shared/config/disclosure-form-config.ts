/**
 * The `disclosureForm` section of the opflow config file: which labels of an invention disclosure
 * form fill which field (on top of the defaults of shared/ingest/disclosure-form.ts), and which
 * fields are sent upstream as which workflow input. A field not mapped to an input stays with the
 * job as metadata and never leaves opflow.
 */
import * as z from 'zod';

const defaultInputs: Readonly<Record<string, string>> = {
  title: 'title',
  priorityDate: 'priorityDate',
  filingDate: 'priorityDate',
};

const fieldName = z.lazy(() =>
  z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'must be a field name: a letter, then letters, digits or _'),
);

export const disclosureFormConfigSchema = z.lazy(() =>
  z.strictObject({
    /** Label as written on the form (case and punctuation do not matter) → field. */
    labels: z.record(z.string().min(1).max(60), fieldName).default({}),
    /**
     * Field → the workflow input it is sent as, when the workflow takes that input; of two fields
     * mapped to one input the first present wins. Default: the title as `title` (it names the
     * platform's report) and the priority date, else the filing date, as a novelty check's
     * `priorityDate` (the prior-art cut-off: the search's end). `{}` keeps every field back.
     */
    inputs: z.record(fieldName, fieldName).default(() => ({ ...defaultInputs })),
  }),
);
export type DisclosureFormConfig = z.infer<typeof disclosureFormConfigSchema>;

export const defaultDisclosureFormConfig: DisclosureFormConfig = { labels: {}, inputs: { ...defaultInputs } };
