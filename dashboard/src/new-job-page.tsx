/**
 * Start a job from a form built from the workflow's input schema (fields, limits, defaults, its
 * example), or again like an earlier job (`#/new?from=<id>`: its workflow, input, label and priority, editable
 * before it starts). The values are checked against the schema's limits in the page, then sent to
 * `POST /jobs`; a refusal of the server shows beside the field it names. A request over the job
 * API's body limit (images given as data) is refused in the page, with what to do instead.
 */
import { useEffect, useState } from 'preact/hooks';
import { Notice, PageHead } from './components';
import type { FieldOfPath, FormProblem } from './form-problems';
import { useFocusHeading } from './hooks';
import { ImageField } from './image-field';
import { bodyBytes, largeImageAdvice, maxBodyBytes, sizeText } from './image-input';
import {
  type FormField,
  type FormValues,
  formFields,
  inputOf,
  valuesOf,
  type WorkflowDoc,
} from './input-form';
import { jobHref } from './routing';
import { ErrorSummary, FieldProblem, fieldAria, useSubmit } from './submit';
import type { Api, JobView, Route, Settings } from './types';

interface Earlier {
  jobId: string;
  workflow: string;
  input: Record<string, unknown>;
  label?: string | undefined;
  selection: { mode: 'auto' | 'manual' };
  priority?: Priority | undefined;
  maxUnits?: number | undefined;
}

type Priority = JobView['priority'];
/** What each priority means for the job, as the form says it (docs/concepts/admission.md). */
const priorities: { value: Priority; label: string; hint: string }[] = [
  {
    value: 'high',
    label: 'High',
    hint: 'its calls go ahead of batches and other work at the next free token',
  },
  { value: 'normal', label: 'Normal', hint: 'its calls take turns with other work' },
  { value: 'low', label: 'Low', hint: 'its calls wait while other work is ready' },
];

function Field(props: {
  field: FormField;
  workflow: string;
  value: string;
  problem: string | undefined;
  onChange: (value: string) => void;
}) {
  const { field, value, problem, onChange } = props;
  if (field.kind === 'images') return <ImageField {...props} />;
  const id = `field-${field.name}`;
  const describedBy = `${id}-hint${problem ? ` ${id}-problem` : ''}`;
  const common = {
    id,
    name: field.name,
    'aria-describedby': describedBy,
    'aria-invalid': problem ? ('true' as const) : undefined,
    required: field.required,
  };
  if (field.kind === 'flag') {
    return (
      <div class="field check">
        <input
          type="checkbox"
          {...common}
          checked={value === 'true'}
          onChange={(event) => onChange(event.currentTarget.checked ? 'true' : 'false')}
        />
        <label for={id}>{field.name}</label>
        <span id={`${id}-hint`} class="hint">
          {field.hint}
        </span>
      </div>
    );
  }
  const wide = field.kind === 'longtext' || field.kind === 'list' || field.kind === 'json';
  return (
    <div class={`field${wide ? ' wide' : ''}`}>
      <label for={id}>
        {field.name}
        {field.required ? ' (required)' : ''}
      </label>
      {field.kind === 'choice' ? (
        <select {...common} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
          {field.required ? null : <option value="">(not set)</option>}
          {field.choices.map((choice) => (
            <option value={choice}>{choice}</option>
          ))}
        </select>
      ) : wide ? (
        <textarea
          {...common}
          rows={field.kind === 'longtext' ? 8 : 4}
          maxLength={field.schema.maxLength}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      ) : field.kind === 'number' ? (
        <input
          {...common}
          type="number"
          min={field.schema.minimum}
          max={field.schema.maximum}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      ) : (
        <input
          {...common}
          type="text"
          maxLength={field.schema.maxLength}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      )}
      <span id={`${id}-hint`} class="hint">
        {field.hint}
      </span>
      {problem ? (
        <span id={`${id}-problem`} class="problem">
          {problem}
        </span>
      ) : null}
    </div>
  );
}

/** The form's field a server issue names: `body.input.text` (or an alias of it), `body.label`, ... */
function fieldOfPath(fields: FormField[]): FieldOfPath {
  return (path) => {
    const name = path.replace(/^body\./, '');
    const input = /^input\.([\w-]+)/.exec(name)?.[1];
    if (input) {
      const field = fields.find((entry) => entry.name === input || entry.alsoAs.includes(input));
      return field ? { field: `field-${field.name}`, label: field.name } : undefined;
    }
    const options: Record<string, { field: string; label: string }> = {
      label: { field: 'job-label', label: 'Label' },
      priority: { field: 'job-priority', label: 'Priority' },
      maxUnits: { field: 'job-max-units', label: 'Most billed units' },
      selection: { field: 'job-manual', label: 'Selection' },
    };
    return options[name.split(/[.[]/)[0]!];
  };
}

function JobForm(props: { api: Api; doc: WorkflowDoc; earlier: Earlier | undefined }) {
  const { api, doc, earlier } = props;
  const fields = formFields(doc);
  const [values, setValues] = useState<FormValues>(() =>
    valuesOf(fields, earlier?.workflow === doc.name ? earlier.input : undefined),
  );
  const [label, setLabel] = useState(earlier?.workflow === doc.name ? (earlier.label ?? '') : '');
  const [manual, setManual] = useState(earlier?.selection.mode === 'manual');
  const [priority, setPriority] = useState<Priority>(
    earlier?.workflow === doc.name ? (earlier.priority ?? 'normal') : 'normal',
  );
  const [maxUnits, setMaxUnits] = useState(
    earlier?.workflow === doc.name && earlier.maxUnits !== undefined ? String(earlier.maxUnits) : '',
  );
  const submit = useSubmit();

  const body = () => ({
    workflow: doc.name,
    input: inputOf(fields, values).input,
    ...(label.trim() ? { label: label.trim() } : {}),
    selection: { mode: manual ? 'manual' : 'auto' },
    priority,
    ...(maxUnits.trim() ? { maxUnits: Number(maxUnits.trim()) } : {}),
    source: 'api',
  });
  /** What the page finds wrong before anything is sent, field by field. */
  const check = (): FormProblem[] => {
    const { problems } = inputOf(fields, values);
    const found: FormProblem[] = Object.entries(problems).map(([name, message]) => ({
      field: `field-${name}`,
      label: name,
      message,
    }));
    if (maxUnits.trim() && !/^[1-9]\d{0,8}$/.test(maxUnits.trim()))
      found.push({
        field: 'job-max-units',
        label: 'Most billed units',
        message: 'must be a whole number above 0',
      });
    const size = found.length ? 0 : bodyBytes(body());
    if (size > maxBodyBytes) {
      // Images given as data: the page can say what the server's 413 would.
      const images = fields.find((field) => field.kind === 'images');
      found.push({
        ...(images ? { field: `field-${images.name}` } : {}),
        label: images?.name ?? 'The request',
        message: `the request would be ${sizeText(size)}, over the job API's limit of 1 MiB: ${largeImageAdvice(doc.name)}`,
      });
    }
    return found;
  };
  const start = async () => {
    const answer = await api<{ job: JobView; created: boolean }>('POST', '/jobs', body());
    location.hash = jobHref(answer.job.id);
  };
  const onSubmit = (event: Event) => {
    event.preventDefault();
    void submit.run({ check, work: start, fieldOf: fieldOfPath(fields) });
  };
  return (
    <form class="card" onSubmit={onSubmit} noValidate aria-labelledby="form-heading">
      <h2 id="form-heading">{doc.name}</h2>
      <ErrorSummary submit={submit} title="The job was not started" />
      <p class="muted">{doc.description}</p>
      <div class="actions">
        <button
          type="button"
          onClick={() => setValues(valuesOf(fields, doc.example as Record<string, unknown>))}
        >
          Fill in the example
        </button>
        <button type="button" onClick={() => setValues(valuesOf(fields))}>
          Clear the fields
        </button>
      </div>
      <fieldset class="form-grid" style={{ border: 'none', padding: 0, margin: '0.5rem 0' }}>
        <legend class="visually-hidden">Input of {doc.name}</legend>
        {fields.map((field) => (
          <Field
            key={`${doc.name}-${field.name}`}
            field={field}
            workflow={doc.name}
            value={values[field.name] ?? ''}
            problem={submit.problemOf(`field-${field.name}`)}
            onChange={(value) => {
              setValues({ ...values, [field.name]: value });
              submit.clear(`field-${field.name}`);
            }}
          />
        ))}
      </fieldset>
      <fieldset class="form-grid" style={{ border: 'none', padding: 0, margin: '0.5rem 0' }}>
        <legend class="visually-hidden">Options of the job</legend>
        <div class="field">
          <label for="job-label">Label</label>
          <input
            id="job-label"
            maxLength={200}
            value={label}
            onInput={(event) => setLabel(event.currentTarget.value)}
            {...fieldAria('job-label', submit)}
          />
          <span id="job-label-hint" class="hint">
            optional; shown in the list (at most 200 characters)
          </span>
          <FieldProblem field="job-label" submit={submit} />
        </div>
        <div class="field">
          <label for="job-priority">Priority</label>
          <select
            id="job-priority"
            value={priority}
            onChange={(event) => setPriority(event.currentTarget.value as Priority)}
            {...fieldAria('job-priority', submit)}
          >
            {priorities.map((entry) => (
              <option value={entry.value}>{entry.label}</option>
            ))}
          </select>
          <span id="job-priority-hint" class="hint">
            {priorities.find((entry) => entry.value === priority)?.hint}
          </span>
          <FieldProblem field="job-priority" submit={submit} />
        </div>
        <div class="field">
          <label for="job-max-units">Most billed units</label>
          <input
            id="job-max-units"
            inputMode="numeric"
            value={maxUnits}
            onInput={(event) => {
              setMaxUnits(event.currentTarget.value);
              submit.clear('job-max-units');
            }}
            {...fieldAria('job-max-units', submit)}
          />
          <span id="job-max-units-hint" class="hint">
            optional; the job stops (failed, cost cap) when it has billed this many
          </span>
          <FieldProblem field="job-max-units" submit={submit} />
        </div>
        {
          <div class="field check wide">
            <input
              id="job-manual"
              type="checkbox"
              checked={manual}
              onChange={(event) => setManual(event.currentTarget.checked)}
              aria-describedby="job-manual-hint"
            />
            <label for="job-manual">Let me choose at its selection points</label>
            <span id="job-manual-hint" class="hint">
              where the workflow offers options (features, directions), the job waits for your answer instead
              of taking the defaults
            </span>
          </div>
        }
      </fieldset>
      <div class="actions">
        <button class="primary" type="submit" disabled={submit.busy} aria-disabled={submit.busy}>
          {submit.busy ? 'Starting…' : 'Start the job'}
        </button>
        <span class="muted small">It starts at once and is billed as it runs.</span>
      </div>
    </form>
  );
}

export function NewJobPage({ api, config, route }: { api: Api; config: Settings; route: Route }) {
  const heading = useFocusHeading('new');
  const docs = config.workflowDocs ?? [];
  const from = route.query.get('from') ?? '';
  const [earlier, setEarlier] = useState<Earlier | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [workflow, setWorkflow] = useState(route.query.get('workflow') ?? '');
  useEffect(() => {
    if (!from) return;
    api<Earlier>('GET', `/jobs/${encodeURIComponent(from)}/input`)
      .then((answer) => {
        setEarlier(answer);
        setWorkflow(answer.workflow);
      })
      .catch((failure: Error) => setLoadError(`The earlier job's input cannot be read: ${failure.message}`));
  }, [api, from]);
  const doc = docs.find((entry) => entry.name === workflow);
  return (
    <main id="main">
      <PageHead
        heading={heading}
        back={{ href: from ? jobHref(from) : '#/', label: from ? 'The earlier job' : 'All jobs' }}
        title={from ? 'Run again like this' : 'New job'}
        subtitle={
          from
            ? 'The earlier job’s workflow, input, label, priority and cost cap, to change as you like before it starts.'
            : 'Choose a workflow; its form lists every input field with its limits and default.'
        }
      />
      <Notice error={loadError} />
      {from && !earlier && !loadError ? (
        <p aria-busy="true">Loading the earlier job’s input…</p>
      ) : (
        <>
          <div class="card">
            <div class="field">
              <label for="workflow">Workflow</label>
              <select
                id="workflow"
                value={workflow}
                onChange={(event) => setWorkflow(event.currentTarget.value)}
              >
                <option value="">choose one…</option>
                {docs.map((entry) => (
                  <option value={entry.name}>
                    {entry.name}: {entry.description}
                  </option>
                ))}
              </select>
            </div>
          </div>
          {doc ? <JobForm key={doc.name} api={api} doc={doc} earlier={earlier} /> : null}
        </>
      )}
    </main>
  );
}
