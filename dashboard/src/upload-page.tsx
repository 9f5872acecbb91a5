/**
 * A manifest (JSON Lines or CSV), or documents (.docx, .pdf, .txt, .md, .json: one item each, as
 * `opflow ingest <folder>` reads a folder), uploaded from the page becomes a batch in two steps:
 * first every line or document is checked as `opflow ingest --dry-run` checks it and the cost is
 * estimated (nothing stored, nothing paid), then, once the person has seen that, the batch starts. Both go through the start
 * form's submit hook (submit.tsx): one at a time, each problem beside its field (a refused line beside
 * the file) and in an error summary that takes the focus.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { defaultMaxBodyBytes } from '../../shared/http/body-limit';
import { ApiError, startBatchUpload } from './api';
import { PageHead, ProblemsTable, Tiles } from './components';
import { type DocumentPut, type PutState, sendDocuments, sha256Hex } from './document-puts';
import {
  type FieldOfPath,
  type FormProblem,
  jobApiRefusalText,
  overLimitText,
  type SentFile,
} from './form-problems';
import { plural } from './format';
import { useFocusHeading } from './hooks';
import { batchHref } from './routing';
import { ErrorSummary, FieldProblem, fieldAria, type Submit, useSubmit } from './submit';
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
  /** AWS documents: what of them is read only when the ingest function takes the batch. */
  reading?: string | undefined;
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

/**
 * The job API's body limit (the server's own constant): the page sends no check or start whose
 * body, exactly as it would go (the manifest escaped in JSON, documents as base64), is over it.
 */
const bodyLimit = defaultMaxBodyBytes;
/** Documents go as base64 (a third larger) in the same 1 MiB body: together at most this. */
export const maxDocumentsBytes = 740 * 1024;
/** Documents sent by presigned PUTs (the AWS job API): each at most this, and so many together. */
const maxPutDocumentBytes = 50 * 1024 * 1024;
const maxPutDocumentsBytes = 1024 * 1024 * 1024;
const maxPutDocuments = 200;
/** The documents a batch takes from the page: those `opflow ingest <folder>` reads. */
const documentTypes = '.docx,.pdf,.txt,.md,.json,.png,.jpg,.jpeg';

/** A file's bytes in base64, as the body carries them. */
async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text = '';
  for (let at = 0; at < bytes.length; at += 0x8000)
    text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(text);
}
/** Refused lines listed in the error summary; the table below the check lists the rest. */
const summaryLines = 10;

/** The form's fields by the body's names, as a server issue's path (`body.workflow`) names them. */
const fields: Record<string, { field: string; label: string }> = {
  fileName: { field: 'manifest-file', label: 'Manifest file' },
  manifest: { field: 'manifest-file', label: 'Manifest file' },
  documents: { field: 'documents-file', label: 'Documents' },
  documentFiles: { field: 'documents-file', label: 'Documents' },
  workflow: { field: 'upload-workflow', label: 'Workflow' },
  batchName: { field: 'upload-batch', label: 'Batch name' },
  failureBudget: { field: 'upload-budget', label: 'Failure budget' },
  maxUnits: { field: 'upload-max', label: 'Most billed units' },
  selection: { field: 'upload-manual', label: 'Selection' },
};
const fieldOf: FieldOfPath = (path) => fields[path.replace(/^body\./, '').split(/[.[]/)[0]!];

/**
 * The lines a check refused, as a refusal of the manifest's field: each shows beside the file and in
 * the error summary (the first few there, with how many more the table lists).
 */
class RefusedLines extends Error {
  readonly issues: { path: string; message: string }[];
  constructor(checked: Checked, unit: 'line' | 'document') {
    super(`${plural(checked.problemCount, unit)} would not be used`);
    const path = unit === 'line' ? 'body.manifest' : 'body.documents';
    const listed = checked.problems.slice(0, summaryLines).map((problem) => ({
      path,
      message: `${problem.position}${problem.id && problem.id !== problem.position ? ` (id ${problem.id})` : ''}: ${problem.reason}`,
    }));
    const more = checked.problemCount - listed.length;
    this.issues = more > 0 ? [...listed, { path, message: `and ${more} more, listed below` }] : listed;
  }
}

/**
 * The field of the files to upload (a manifest, or documents: each its own id), its hint, and every
 * problem of it under it (a check may refuse several lines or documents).
 */
function FileField(props: {
  id: 'manifest-file' | 'documents-file';
  label: string;
  accept: string;
  multiple?: boolean;
  onChange: (event: { currentTarget: HTMLInputElement }) => void;
  submit: Submit;
  children: ComponentChildren;
}) {
  const { id, submit } = props;
  const found = submit.problems.filter((problem) => problem.field === id);
  return (
    <div class="field">
      <label for={id}>{props.label} (required)</label>
      <input
        id={id}
        type="file"
        multiple={props.multiple}
        accept={props.accept}
        onChange={props.onChange}
        {...fieldAria(id, submit)}
      />
      <span id={`${id}-hint`} class="hint">
        {props.children}
      </span>
      {found.length === 0 ? null : (
        <div id={`${id}-problem`} class="problem">
          {found.length === 1 ? (
            found[0]!.message
          ) : (
            <ul class="problem-list">
              {found.map((problem) => (
                <li>{problem.message}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

/** What the check found, and the button that starts exactly that. */
function CheckedSection(props: {
  current: Checked;
  submit: Submit;
  start: () => void;
  unit: 'line' | 'document';
}) {
  const { current, submit, start, unit } = props;
  const toRun = Object.values(current.toRun).reduce((sum, n) => sum + n, 0);
  return (
    <section class="card" aria-labelledby="check-heading" aria-live="polite">
      <h2 id="check-heading">What it would do</h2>
      <Tiles
        label="The check"
        tiles={[
          { label: unit === 'line' ? 'Lines read' : 'Documents read', value: current.records },
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
      {current.reading ? <p class="muted small">Not read by this check: {current.reading}.</p> : null}
      {current.problems.length > 0 ? (
        <div class="table-card">
          <ProblemsTable
            caption={`${plural(current.problemCount, unit)} that would not be used (the rest would)`}
            problems={current.problems}
          />
        </div>
      ) : null}
      <div class="actions">
        <button
          class="primary"
          type="button"
          disabled={submit.busy || toRun === 0}
          aria-disabled={submit.busy}
          onClick={start}
        >
          {submit.busy ? 'Starting…' : `Start the batch: ${plural(toRun, 'item')}`}
        </button>
        {toRun === 0 ? <span class="muted">Nothing to run: fix the {unit}s refused above.</span> : null}
      </div>
    </section>
  );
}

/** "1.3/3.0 MB", "90/98 KB": bytes sent of a total, in the total's unit. */
function sentText(sent: number, total: number): string {
  const mb = total >= 1024 * 1024;
  const amount = (bytes: number) =>
    mb ? (bytes / 1024 / 1024).toFixed(1) : Math.ceil(bytes / 1024).toLocaleString();
  return `${sent === total ? '' : `${amount(sent)}/`}${amount(total)} ${mb ? 'MB' : 'KB'}`;
}

/**
 * Each document's PUT as it goes, one row each in fixed columns (its name, its bar, its percentage
 * and bytes), so every bar has the same width and starts at the same place; a failed one named with
 * why under its row and sent again on request.
 */
export function SendingSection(props: {
  puts: DocumentPut[];
  states: Record<string, PutState>;
  /** Each document's size in bytes, by name (shown before its PUT reports any). */
  sizes: Record<string, number>;
  busy: boolean;
  again: (name: string) => void;
}) {
  const { puts, states, sizes, busy, again } = props;
  const sent = puts.filter((put) => states[put.name]?.state === 'sent').length;
  return (
    <section class="card" aria-labelledby="sending-heading">
      <h2 id="sending-heading">
        Sending the documents: {sent} of {puts.length} sent
      </h2>
      <ul class="sends small" aria-live="polite">
        {puts.map((put) => {
          const state = states[put.name] ?? { state: 'waiting' };
          const size = sizes[put.name] ?? 0;
          return (
            <li id={`put-${put.name.replace(/[^\w-]/g, '_')}`} data-state={state.state}>
              <span class="send-name">{put.name}</span>
              <progress
                max={state.state === 'sending' ? state.total || 1 : 1}
                value={state.state === 'sending' ? state.sent : state.state === 'sent' ? 1 : 0}
                aria-label={`${put.name} sent`}
              />
              {state.state === 'waiting' ? (
                <span class="send-state muted">waiting · {sentText(size, size)}</span>
              ) : state.state === 'sending' ? (
                <span class="send-state">
                  {Math.round((100 * state.sent) / Math.max(1, state.total))} % ·{' '}
                  {sentText(state.sent, state.total)}
                </span>
              ) : state.state === 'sent' ? (
                <span class="send-state">sent · {sentText(size, size)}</span>
              ) : (
                <>
                  <span class="send-state problem">failed</span>
                  <div class="send-problem">
                    <span class="problem">not sent: {state.reason}</span>{' '}
                    <button type="button" disabled={busy} onClick={() => again(put.name)}>
                      Send {put.name} again
                    </button>
                  </div>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

export function UploadPage({ api, config }: { api: Api; config: Settings }) {
  const heading = useFocusHeading('upload');
  // A manifest, or documents (one item each).
  const [kind, setKind] = useState<'manifest' | 'documents'>('manifest');
  const unit = kind === 'manifest' ? 'line' : 'document';
  /** The field of the files chosen: the manifest's or the documents'. */
  const fileField = kind === 'manifest' ? fields.manifest! : fields.documents!;
  // On the AWS job API documents go by presigned PUTs: the body names them (size, SHA-256).
  const presigned = config.starts?.documentUploads === 'presigned';
  const [documents, setDocuments] = useState<
    { name: string; size: number; content?: string; sha256?: string; file?: File }[]
  >([]);
  /** The documents' PUTs under way (AWS): the batch they start, each PUT and where it is. */
  const [sending, setSending] = useState<
    { batchId: string; puts: DocumentPut[]; states: Record<string, PutState> } | undefined
  >(undefined);
  const [fileName, setFileName] = useState('');
  const [manifest, setManifest] = useState('');
  const [tooLarge, setTooLarge] = useState<string | undefined>(undefined);
  const [workflow, setWorkflow] = useState('');
  const [batchName, setBatchName] = useState('');
  const [manual, setManual] = useState(false);
  const [failureBudget, setFailureBudget] = useState('');
  const [maxUnits, setMaxUnits] = useState('');
  const [checked, setChecked] = useState<{ key: string; answer: Checked } | undefined>(undefined);
  // What the summary says went wrong: the check (its refusal or its refused lines) or the start.
  const [attempt, setAttempt] = useState<'check' | 'start'>('check');
  const submit = useSubmit();

  const body = () => ({
    ...(kind === 'manifest'
      ? { fileName, manifest }
      : presigned
        ? { documentFiles: documents.map(({ name, size, sha256 }) => ({ name, size, sha256 })) }
        : { documents: documents.map(({ name, content }) => ({ name, content })) }),
    workflow,
    ...(batchName.trim() ? { batchName: batchName.trim() } : {}),
    selection: manual ? 'manual' : 'auto',
    ...(failureBudget.trim() ? { failureBudget: failureBudget.trim() } : {}),
    ...(maxUnits.trim() ? { maxUnits: Number(maxUnits) } : {}),
  });
  // The check holds for exactly what was checked: any change asks for a new one.
  const key = JSON.stringify(body());
  const current = checked?.key === key ? checked.answer : undefined;

  /** What the page finds wrong before anything is sent, field by field. */
  const pageProblems = (): FormProblem[] => [
    ...(tooLarge
      ? [{ ...fileField, message: tooLarge }]
      : kind === 'manifest' && !fileName
        ? [{ ...fields.manifest!, message: 'choose a .jsonl or .csv file' }]
        : kind === 'documents' && documents.length === 0
          ? [{ ...fields.documents!, message: 'choose one or more documents' }]
          : []),
    ...overLimit(),
    ...(workflow ? [] : [{ ...fields.workflow!, message: 'choose the workflow its lines are for' }]),
    ...(maxUnits.trim() && !/^[1-9]\d{0,8}$/.test(maxUnits.trim())
      ? [{ ...fields.maxUnits!, message: 'must be a whole number above 0' }]
      : []),
  ];
  /** The chosen files, once in the body the page would send, over the job API's limit: said at the files. */
  const overLimit = (): FormProblem[] => {
    if (tooLarge || (kind === 'manifest' ? !fileName : presigned || documents.length === 0)) return [];
    const sent = sentFile(body());
    return (sent.requestBytes ?? 0) > bodyLimit
      ? [{ ...fileField, message: overLimitText(sent, bodyLimit) }]
      : [];
  };
  /** A refusal of the chosen files, beside the field and in the summary. */
  const refuseFiles = (message: string) => {
    setTooLarge(message);
    setAttempt('check');
    void submit.run({
      check: () => [{ ...fileField, message }],
      work: async () => {},
      fieldOf,
    });
  };
  const chooseDocuments = async (event: { currentTarget: HTMLInputElement }) => {
    const files = [...(event.currentTarget.files ?? [])];
    submit.clear(fileField.field);
    setTooLarge(undefined);
    setDocuments([]);
    setSending(undefined);
    if (files.length === 0) return;
    const total = files.reduce((sum, file) => sum + file.size, 0);
    if (presigned) {
      const over = files.filter((file) => file.size > maxPutDocumentBytes);
      const refusal =
        files.length > maxPutDocuments
          ? `${files.length} documents; the page takes up to ${maxPutDocuments} at once (more: opflow ingest <folder>)`
          : over.length > 0
            ? `${over.map((file) => `${file.name} is ${Math.ceil(file.size / 1024 / 1024)} MB`).join('; ')}; a document may be at most ${maxPutDocumentBytes / 1024 / 1024} MB`
            : total > maxPutDocumentsBytes
              ? `the documents are ${Math.ceil(total / 1024 / 1024)} MB together; the page takes up to ${maxPutDocumentsBytes / 1024 / 1024} MB at once (more: opflow ingest <folder>)`
              : undefined;
      if (refusal) {
        refuseFiles(refusal);
        return;
      }
      setDocuments(
        await Promise.all(
          files.map(async (file) => ({
            name: file.name,
            size: file.size,
            sha256: await sha256Hex(file),
            file,
          })),
        ),
      );
      return;
    }
    if (total > maxDocumentsBytes) {
      refuseFiles(
        `the ${plural(files.length, 'document')} are ${Math.round(total / 1024)} KB together; the page takes up to ${maxDocumentsBytes / 1024} KB at once (more: a few at a time, or opflow ingest <folder> on the machine that has them)`,
      );
      return;
    }
    setDocuments(
      await Promise.all(
        files.map(async (file) => ({ name: file.name, size: file.size, content: await base64Of(file) })),
      ),
    );
  };
  const choose = async (event: { currentTarget: HTMLInputElement }) => {
    const file = event.currentTarget.files?.[0];
    submit.clear(fileField.field);
    setTooLarge(undefined);
    setFileName('');
    setManifest('');
    if (!file) return;
    // Over the limit before it is even escaped: refused unread.
    if (file.size > bodyLimit) {
      refuseFiles(overLimitText({ name: file.name, bytes: file.size, kind: 'manifest' }, bodyLimit));
      return;
    }
    setFileName(file.name);
    setManifest(await file.text());
  };
  /** What a request sends: the manifest (inside the request's JSON), or the documents together. */
  const sentFile = (request: unknown): SentFile => {
    const requestBytes = new TextEncoder().encode(JSON.stringify(request)).length;
    if (kind === 'manifest')
      return { name: fileName, bytes: new TextEncoder().encode(manifest).length, kind, requestBytes };
    const bytes = documents.reduce((sum, document) => sum + document.size, 0);
    return documents.length === 1
      ? { name: documents[0]!.name, bytes, kind: 'document', requestBytes }
      : { name: plural(documents.length, 'document'), bytes, kind: 'documents', requestBytes };
  };
  /**
   * A refusal of the whole request the files are most of (over the body limit, not JSON), said at
   * the files' field in words: their size, the server's limit, and what to do instead.
   */
  const atTheFiles = (error: unknown, request: unknown): unknown => {
    if (!(error instanceof ApiError)) return error;
    const text = jobApiRefusalText(error, sentFile(request));
    if (!text) return error;
    const path = kind === 'manifest' ? 'body.manifest' : 'body.documents';
    return new ApiError(error.status, error.code, text, [{ path, message: text }]);
  };
  const check = (event: Event) => {
    event.preventDefault();
    setAttempt('check');
    const sent = { key, body: body() };
    void submit.run({
      check: pageProblems,
      work: async () => {
        const answer = await api<Checked>('POST', '/batch-uploads/check', sent.body).catch((error) => {
          throw atTheFiles(error, sent.body);
        });
        setChecked({ key: sent.key, answer });
        if (answer.problemCount > 0) throw new RefusedLines(answer, unit);
      },
      fieldOf,
    });
  };
  /**
   * The documents' commit (AWS): the batch starts once every document is in storage. A document the
   * server does not find there is marked not sent, to send again.
   */
  const commit = async (batchId: string) => {
    try {
      await api('POST', '/batch-uploads/commit', body());
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not-uploaded')
        setSending((current) => {
          if (!current) return current;
          const states = { ...current.states };
          for (const issue of error.issues) {
            const name = issue.message.split(': ')[0] ?? '';
            if (name in states)
              states[name] = { state: 'failed', reason: issue.message.slice(name.length + 2) };
          }
          return { ...current, states };
        });
      throw error;
    }
    location.hash = batchHref(batchId);
  };
  /** Sends the documents named (all of them first, then those that failed), then commits when none is left. */
  const send = async (current: { batchId: string; puts: DocumentPut[] }, names: Set<string>) => {
    const files = new Map(
      documents.flatMap((document) => (document.file ? [[document.name, document.file]] : [])),
    );
    const update = (name: string, state: PutState) =>
      setSending((now) => (now ? { ...now, states: { ...now.states, [name]: state } } : now));
    const failed = await sendDocuments(current.puts, files, names, update);
    if (failed.length > 0)
      throw new ApiError(
        0,
        'upload-failed',
        `${plural(failed.length, 'document')} not sent (${failed.join(', ')}): send ${failed.length === 1 ? 'it' : 'them'} again below`,
      );
    await commit(current.batchId);
  };
  const start = () => {
    setAttempt('start');
    void submit.run({
      work: async () => {
        if (presigned && kind === 'documents') {
          const answer = await api<{ batchId: string; uploads: DocumentPut[] }>(
            'POST',
            '/batch-uploads',
            body(),
          );
          const current = {
            batchId: answer.batchId,
            puts: answer.uploads,
            states: Object.fromEntries(
              answer.uploads.map((put) => [put.name, { state: 'waiting' } as PutState]),
            ),
          };
          setSending(current);
          await send(current, new Set(answer.uploads.map((put) => put.name)));
          return;
        }
        const request = body();
        const batchId = await startBatchUpload(api, request).catch((error) => {
          throw atTheFiles(error, request);
        });
        location.hash = batchHref(batchId);
      },
      fieldOf,
    });
  };
  /** One failed document sent again (with fresh links when these expired), then the commit if none is left. */
  const sendAgain = (name: string) => {
    if (!sending) return;
    setAttempt('start');
    void submit.run({
      work: async () => {
        let current = sending;
        if (current.puts.some((put) => Date.parse(put.expiresAt) - Date.now() < 60_000)) {
          const answer = await api<{ batchId: string; uploads: DocumentPut[] }>(
            'POST',
            '/batch-uploads',
            body(),
          );
          current = { ...current, batchId: answer.batchId, puts: answer.uploads };
          setSending(current);
        }
        const left = new Set(
          current.puts.filter((put) => current.states[put.name]?.state !== 'sent').map((put) => put.name),
        );
        left.add(name);
        await send(current, left);
      },
      fieldOf,
    });
  };
  const refusedLines =
    current !== undefined &&
    current.problemCount > 0 &&
    submit.problems.some((problem) => problem.field === fileField.field && !problem.message.includes(' KB'));
  // The refused lines are those of the check shown: a change that asks for a new check forgets them.
  useEffect(() => {
    if (refusedLines && !current) submit.clear(fileField.field);
  }, [key]);
  return (
    <main id="main">
      <PageHead
        heading={heading}
        back={{ href: '#/batches', label: 'All batches' }}
        title="Upload a manifest or documents"
        subtitle="A JSON Lines or CSV manifest, one item a line, or documents, one item each, as opflow ingest reads them. Every line or document is checked and the cost estimated before anything starts."
      />
      <form class="card" onSubmit={check} noValidate aria-labelledby="upload-heading">
        <h2 id="upload-heading">What to upload</h2>
        <ErrorSummary
          submit={submit}
          title={
            attempt === 'start'
              ? 'The batch was not started'
              : refusedLines && current
                ? `${plural(current.problemCount, unit)}${kind === 'manifest' ? ` of ${fileName}` : ''} would not be used (the rest would)`
                : `The ${kind === 'manifest' ? 'manifest was' : 'documents were'} not checked`
          }
        />
        {config.starts?.documents ? (
          <fieldset class="choice">
            <legend>Upload</legend>
            {(
              [
                ['manifest', 'A manifest: one item a line'],
                ['documents', 'Documents: one item each (.docx, .pdf, .txt, .md, .json)'],
              ] as const
            ).map(([value, label]) => (
              <label>
                <input
                  type="radio"
                  name="upload-kind"
                  value={value}
                  checked={kind === value}
                  onChange={() => {
                    setKind(value);
                    setTooLarge(undefined);
                    submit.clear(fileField.field);
                  }}
                />{' '}
                {label}
              </label>
            ))}
          </fieldset>
        ) : null}
        <div class="form-grid">
          {kind === 'manifest' ? (
            <FileField
              id="manifest-file"
              label="Manifest file"
              accept=".jsonl,.ndjson,.csv,.tsv"
              onChange={choose}
              submit={submit}
            >
              .jsonl or .csv, up to {(bodyLimit / 1024).toLocaleString()} KB as sent (escaped in JSON: quotes
              and line ends take more); each line an <code>id</code> and the workflow's input fields (its
              lines may not name documents)
            </FileField>
          ) : (
            <FileField
              id="documents-file"
              label="Documents"
              multiple
              accept={documentTypes}
              onChange={chooseDocuments}
              submit={submit}
            >
              disclosures as .docx, .pdf, .txt, .md or .json (product images as .png, .jpg),{' '}
              {presigned
                ? `each up to ${maxPutDocumentBytes / 1024 / 1024} MB, sent straight to storage; read by the ingest function as opflow ingest reads a folder's`
                : `up to ${maxDocumentsBytes / 1024} KB together; each read as opflow ingest reads a folder's`}
            </FileField>
          )}
          <div class="field">
            <label for="upload-workflow">Workflow (required)</label>
            <select
              id="upload-workflow"
              value={workflow}
              onChange={(event) => {
                setWorkflow(event.currentTarget.value);
                submit.clear('upload-workflow');
              }}
              {...fieldAria('upload-workflow', submit, false)}
            >
              <option value="">choose one…</option>
              {config.workflows.map((name) => (
                <option value={name}>{name}</option>
              ))}
            </select>
            <FieldProblem field="upload-workflow" submit={submit} />
          </div>
          <div class="field">
            <label for="upload-batch">Batch name</label>
            <input
              id="upload-batch"
              value={batchName}
              maxLength={100}
              onInput={(event) => {
                setBatchName(event.currentTarget.value);
                submit.clear('upload-batch');
              }}
              {...fieldAria('upload-batch', submit)}
            />
            <span id="upload-batch-hint" class="hint">
              optional; default: after the file name
            </span>
            <FieldProblem field="upload-batch" submit={submit} />
          </div>
          <div class="field">
            <label for="upload-budget">Failure budget</label>
            <input
              id="upload-budget"
              value={failureBudget}
              size={8}
              onInput={(event) => {
                setFailureBudget(event.currentTarget.value);
                submit.clear('upload-budget');
              }}
              {...fieldAria('upload-budget', submit)}
            />
            <span id="upload-budget-hint" class="hint">
              optional; stop starting items after this many failures: 50 or 5%
            </span>
            <FieldProblem field="upload-budget" submit={submit} />
          </div>
          <div class="field">
            <label for="upload-max">Most billed units</label>
            <input
              id="upload-max"
              inputMode="numeric"
              value={maxUnits}
              onInput={(event) => {
                setMaxUnits(event.currentTarget.value);
                submit.clear('upload-max');
              }}
              {...fieldAria('upload-max', submit)}
            />
            <span id="upload-max-hint" class="hint">
              optional; refused when the estimate is over it, paused when the batch reaches it
            </span>
            <FieldProblem field="upload-max" submit={submit} />
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
        {kind === 'documents' && documents.length > 0 ? (
          <>
            <h3>{plural(documents.length, 'document')} chosen</h3>
            <ul class="plain small">
              {documents.map((document) => (
                <li>
                  {document.name}{' '}
                  <span class="muted">({Math.max(1, Math.round(document.size / 1024))} KB)</span>
                </li>
              ))}
            </ul>
          </>
        ) : null}
        {kind === 'manifest' && manifest ? (
          <>
            <h3>{fileName}: first lines</h3>
            <pre class="preview">{manifest.split('\n').slice(0, 8).join('\n')}</pre>
          </>
        ) : null}
        <div class="actions">
          <button class="primary" type="submit" disabled={submit.busy} aria-disabled={submit.busy}>
            Check and estimate
          </button>
          <span class="muted small">Nothing is stored or paid for by a check.</span>
        </div>
      </form>
      {current ? <CheckedSection current={current} submit={submit} start={start} unit={unit} /> : null}
      {sending && kind === 'documents' ? (
        <SendingSection
          puts={sending.puts}
          states={sending.states}
          sizes={Object.fromEntries(documents.map((document) => [document.name, document.size]))}
          busy={submit.busy}
          again={sendAgain}
        />
      ) : null}
    </main>
  );
}
