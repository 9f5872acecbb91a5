/**
 * A manifest (JSON Lines or CSV) uploaded from the page becomes a batch in two steps: first every
 * line is checked as `opflow ingest --dry-run` checks it and the cost is estimated (nothing stored,
 * nothing paid), then, once the person has seen that, the batch starts.
 */
import { useState } from 'preact/hooks';
import { startBatchUpload } from './api';
import { Notice, PageHead, ProblemsTable, Tiles } from './components';
import { plural } from './format';
import { useFocusHeading } from './hooks';
import { batchHref } from './routing';
import type { Api, Settings } from './types';

/** What the server answers to a check (and, with the batch, to a start). */
interface Checked {
  batchId?: string;
  records: number;
  items: number;
  existing: number;
  toRun: Record<string, number>;
  problems: { position: string; id?: string | undefined; reason: string }[];
  problemCount: number;
  estimate: {
    calls: number;
    billedUnits?: number | undefined;
    workflows: {
      workflow: string;
      items: number;
      basedOn: number;
      calls: number;
      billedUnits?: number | undefined;
    }[];
  };
}

/** The request body's limit is 1 MiB; the manifest is most of it. */
const maxManifestBytes = 900 * 1024;

export function UploadPage({ api, config }: { api: Api; config: Settings }) {
  const heading = useFocusHeading('upload');
  const [fileName, setFileName] = useState('');
  const [manifest, setManifest] = useState('');
  const [workflow, setWorkflow] = useState('');
  const [batchName, setBatchName] = useState('');
  const [manual, setManual] = useState(false);
  const [failureBudget, setFailureBudget] = useState('');
  const [maxUnits, setMaxUnits] = useState('');
  const [checked, setChecked] = useState<{ key: string; answer: Checked } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const body = () => ({
    fileName,
    manifest,
    workflow,
    ...(batchName.trim() ? { batchName: batchName.trim() } : {}),
    selection: manual ? 'manual' : 'auto',
    ...(failureBudget.trim() ? { failureBudget: failureBudget.trim() } : {}),
    ...(maxUnits.trim() ? { maxUnits: Number(maxUnits) } : {}),
  });
  // The check holds for exactly what was checked: any change asks for a new one.
  const key = JSON.stringify(body());
  const current = checked?.key === key ? checked.answer : undefined;

  const choose = async (event: { currentTarget: HTMLInputElement }) => {
    const file = event.currentTarget.files?.[0];
    setChecked(undefined);
    setError(undefined);
    if (!file) return;
    if (file.size > maxManifestBytes) {
      setError(
        `${file.name} is ${Math.round(file.size / 1024)} KB; the page takes manifests up to ${maxManifestBytes / 1024} KB. Larger ones: opflow ingest on the machine.`,
      );
      return;
    }
    setFileName(file.name);
    setManifest(await file.text());
  };
  const check = async (event: Event) => {
    event.preventDefault();
    const missing = [!fileName ? 'a manifest file' : '', !workflow ? 'a workflow' : ''].filter(Boolean);
    if (missing.length) {
      setError(`Choose ${missing.join(' and ')} first.`);
      return;
    }
    if (maxUnits.trim() && !/^[1-9]\d*$/.test(maxUnits.trim())) {
      setError('Most billed units must be a whole number above 0.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      setChecked({ key, answer: await api<Checked>('POST', '/batch-uploads/check', body()) });
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      location.hash = batchHref(await startBatchUpload(api, body()));
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const toRun = current ? Object.values(current.toRun).reduce((sum, n) => sum + n, 0) : 0;
  return (
    <main id="main">
      <PageHead
        heading={heading}
        back={{ href: '#/batches', label: 'All batches' }}
        title="Upload a manifest"
        subtitle="A JSON Lines or CSV file, one item a line, as opflow ingest reads it. Every line is checked and the cost estimated before anything starts."
      />
      <form class="card" onSubmit={check} aria-labelledby="upload-heading">
        <h2 id="upload-heading">The manifest</h2>
        <div class="form-grid">
          <div class="field">
            <label for="manifest-file">Manifest file (required)</label>
            <input
              id="manifest-file"
              type="file"
              accept=".jsonl,.ndjson,.csv,.tsv"
              onChange={choose}
              aria-describedby="manifest-hint"
            />
            <span id="manifest-hint" class="hint">
              .jsonl or .csv, up to {maxManifestBytes / 1024} KB; each line an <code>id</code> and the
              workflow's input fields (its lines may not name documents)
            </span>
          </div>
          <div class="field">
            <label for="upload-workflow">Workflow (required)</label>
            <select
              id="upload-workflow"
              value={workflow}
              onChange={(event) => setWorkflow(event.currentTarget.value)}
            >
              <option value="">choose one…</option>
              {config.workflows.map((name) => (
                <option value={name}>{name}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="upload-batch">Batch name</label>
            <input
              id="upload-batch"
              value={batchName}
              maxLength={100}
              onInput={(event) => setBatchName(event.currentTarget.value)}
              aria-describedby="upload-batch-hint"
            />
            <span id="upload-batch-hint" class="hint">
              optional; default: after the file name
            </span>
          </div>
          <div class="field">
            <label for="upload-budget">Failure budget</label>
            <input
              id="upload-budget"
              value={failureBudget}
              size={8}
              onInput={(event) => setFailureBudget(event.currentTarget.value)}
              aria-describedby="upload-budget-hint"
            />
            <span id="upload-budget-hint" class="hint">
              optional; stop starting items after this many failures: 50 or 5%
            </span>
          </div>
          <div class="field">
            <label for="upload-max">Most billed units</label>
            <input
              id="upload-max"
              inputMode="numeric"
              value={maxUnits}
              onInput={(event) => setMaxUnits(event.currentTarget.value)}
              aria-describedby="upload-max-hint"
            />
            <span id="upload-max-hint" class="hint">
              optional; refused when the estimate is over it, paused when the batch reaches it
            </span>
          </div>
          <div class="field check">
            <input
              id="upload-manual"
              type="checkbox"
              checked={manual}
              onChange={(event) => setManual(event.currentTarget.checked)}
            />
            <label for="upload-manual">Let me choose at its jobs' selection points</label>
          </div>
        </div>
        {manifest ? (
          <>
            <h3>{fileName}: first lines</h3>
            <pre class="preview">{manifest.split('\n').slice(0, 8).join('\n')}</pre>
          </>
        ) : null}
        <Notice error={error} />
        <div class="actions">
          <button class="primary" type="submit" disabled={busy}>
            Check and estimate
          </button>
          <span class="muted small">Nothing is stored or paid for by a check.</span>
        </div>
      </form>
      {current ? (
        <section class="card" aria-labelledby="check-heading" aria-live="polite">
          <h2 id="check-heading">What it would do</h2>
          <Tiles
            label="The check"
            tiles={[
              { label: 'Lines read', value: current.records },
              {
                label: 'Usable',
                value: current.items,
                tone: 'ok',
                sub: current.existing ? `${current.existing} ingested before` : undefined,
              },
              {
                label: 'Refused',
                value: current.problemCount,
                tone: current.problemCount ? 'bad' : undefined,
              },
              { label: 'Calls', value: `about ${current.estimate.calls.toLocaleString()}` },
              {
                label: 'Billed units',
                value:
                  current.estimate.billedUnits === undefined
                    ? 'unknown'
                    : `about ${current.estimate.billedUnits.toLocaleString()}`,
                sub: current.estimate.workflows
                  .map((entry) =>
                    entry.basedOn > 0
                      ? `from ${plural(entry.basedOn, `earlier ${entry.workflow} job`)}`
                      : `no ${entry.workflow} job finished yet to learn from`,
                  )
                  .join('; '),
              },
            ]}
          />
          {current.problems.length > 0 ? (
            <div class="table-card">
              <ProblemsTable
                caption={`${plural(current.problemCount, 'line')} that would not be used (the rest would)`}
                problems={current.problems}
              />
            </div>
          ) : null}
          <div class="actions">
            <button class="primary" type="button" disabled={busy || toRun === 0} onClick={start}>
              Start the batch: {plural(toRun, 'item')}
            </button>
            {toRun === 0 ? <span class="muted">Nothing to run: fix the lines refused above.</span> : null}
          </div>
        </section>
      ) : null}
    </main>
  );
}
