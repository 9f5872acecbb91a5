/**
 * Start a job from a form built from the workflow's input schema (fields, limits, defaults, its
 * example), or again like an earlier job (`#/new?from=<id>`: its workflow, input, label and priority, editable
 * before it starts). The values are checked against the schema's limits in the page, then sent to
 * `POST /jobs`; a refusal of the server shows beside the field it names.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Notice, PageHead } from './components';
import { useFocusHeading } from './hooks';
import {
  type FormField,
  type FormValues,
  fieldOfRefusal,
  formFields,
  inputOf,
  valuesOf,
  type WorkflowDoc,
} from './input-form';
import { jobHref } from './routing';
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
  value: string;
  problem: string | undefined;
  onChange: (value: string) => void;
}) {
  const { field, value, problem, onChange } = props;
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
          {field.name} {problem}
        </span>
      ) : null}
    </div>
  );
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
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  const focusFirstProblem = (found: Record<string, string>) => {
    const first = fields.find((field) => found[field.name]);
    if (first) form.current?.querySelector<HTMLElement>(`#field-${first.name}`)?.focus();
    else if (found['most billed units']) form.current?.querySelector<HTMLElement>('#job-max-units')?.focus();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const { input, problems: found } = inputOf(fields, values);
    if (maxUnits.trim() && !/^[1-9]\d{0,8}$/.test(maxUnits.trim()))
      found['most billed units'] = 'must be a whole number above 0';
    setProblems(found);
    if (Object.keys(found).length > 0) {
      setError(
        `Not started: ${Object.entries(found)
          .map(([name, problem]) => `${name} ${problem}`)
          .join('; ')}.`,
      );
      focusFirstProblem(found);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api<{ job: JobView; created: boolean }>('POST', '/jobs', {
        workflow: doc.name,
        input,
        ...(label.trim() ? { label: label.trim() } : {}),
        selection: { mode: manual ? 'manual' : 'auto' },
        priority,
        ...(maxUnits.trim() ? { maxUnits: Number(maxUnits.trim()) } : {}),
        source: 'api',
      });
      location.hash = jobHref(answer.job.id);
    } catch (failure) {
      const message = (failure as Error).message;
      const field = fieldOfRefusal(message);
      if (field && fields.some((entry) => entry.name === field)) {
        const next = { [field]: message.replace(/^.*?body\.input\.[\w-]+:\s*/, '') };
        setProblems(next);
        focusFirstProblem(next);
      }
      setError(`The server refused it: ${message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="form-heading">
      <h2 id="form-heading">{doc.name}</h2>
      <p class="muted">{doc.description}</p>
      <div class="actions">
        <button
          type="button"
          onClick={() => {
            setValues(valuesOf(fields, doc.example as Record<string, unknown>));
            setProblems({});
          }}
        >
          Fill in the example
        </button>
        <button
          type="button"
          onClick={() => {
            setValues(valuesOf(fields));
            setProblems({});
          }}
        >
          Clear the fields
        </button>
      </div>
      <fieldset class="form-grid" style={{ border: 'none', padding: 0, margin: '0.5rem 0' }}>
        <legend class="visually-hidden">Input of {doc.name}</legend>
        {fields.map((field) => (
          <Field
            key={`${doc.name}-${field.name}`}
            field={field}
            value={values[field.name] ?? ''}
            problem={problems[field.name]}
            onChange={(value) => setValues({ ...values, [field.name]: value })}
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
            aria-describedby="job-label-hint"
          />
          <span id="job-label-hint" class="hint">
            optional; shown in the list (at most 200 characters)
          </span>
        </div>
        <div class="field">
          <label for="job-priority">Priority</label>
          <select
            id="job-priority"
            value={priority}
            onChange={(event) => setPriority(event.currentTarget.value as Priority)}
            aria-describedby="job-priority-hint"
          >
            {priorities.map((entry) => (
              <option value={entry.value}>{entry.label}</option>
            ))}
          </select>
          <span id="job-priority-hint" class="hint">
            {priorities.find((entry) => entry.value === priority)?.hint}
          </span>
        </div>
        <div class="field">
          <label for="job-max-units">Most billed units</label>
          <input
            id="job-max-units"
            inputMode="numeric"
            value={maxUnits}
            onInput={(event) => {
              setMaxUnits(event.currentTarget.value);
              const { 'most billed units': _fixed, ...rest } = problems;
              setProblems(rest);
            }}
            aria-describedby={`job-max-units-hint${problems['most billed units'] ? ' job-max-units-problem' : ''}`}
            aria-invalid={problems['most billed units'] ? 'true' : undefined}
          />
          <span id="job-max-units-hint" class="hint">
            optional; the job stops (failed, cost cap) when it has billed this many
          </span>
          {problems['most billed units'] ? (
            <span id="job-max-units-problem" class="problem">
              most billed units {problems['most billed units']}
            </span>
          ) : null}
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
      <Notice error={error} />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy}>
          {busy ? 'Starting…' : 'Start the job'}
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
