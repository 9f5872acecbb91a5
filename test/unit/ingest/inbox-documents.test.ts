// Documents sent by presigned PUTs (the AWS job API's documentFiles): the body's validation, each
// refusal naming its document; the layout the commit checks and writes (the documents as files a
// manifest names, the manifest last), read back by the ingest's own classification of inbox keys.
import { describe, expect, it } from 'vitest';
import { maxDocumentBytes } from '../../../shared/ingest/documents';
import { classifyInboxKey } from '../../../shared/ingest/inbox';
import { documentFilesPlan, documentMismatch } from '../../../shared/ingest/inbox-documents';
import {
  documentFilesUploadBodySchema,
  maxUploadedDocumentBytes,
} from '../../../shared/ingest/upload-request';

const sha = (char: string) => char.repeat(64);
const file = (name: string, size = 10, hash = sha('a')) => ({ name, size, sha256: hash });
const options = { selection: 'auto' as const, inFlight: 16 };

describe('documentFiles bodies', () => {
  it('takes the documents the page takes, and names each document it refuses with why', () => {
    expect(maxUploadedDocumentBytes).toBe(maxDocumentBytes);
    const good = documentFilesUploadBodySchema.safeParse({
      documentFiles: [file('a.pdf'), file('b (v2).docx'), file('c.md'), file('photo.JPG')],
      workflow: 'patent-count',
    });
    expect(good.success).toBe(true);
    const bad = documentFilesUploadBodySchema.safeParse({
      documentFiles: [
        file('../x.pdf'),
        file('run.exe'),
        file('empty.txt', 0),
        file('big.pdf', maxUploadedDocumentBytes + 1),
        file('A.pdf'),
        file('a.pdf'),
        { name: 'd.md', size: 1, sha256: 'XYZ' },
      ],
      workflow: 'patent-count',
    });
    expect(bad.success).toBe(false);
    const issues = bad.error!.issues.map((issue) => [issue.path.join('.'), issue.message]);
    expect(issues).toEqual(
      expect.arrayContaining([
        ['documentFiles.0.name', expect.stringMatching(/^must be a file name/)],
        [
          'documentFiles.1.name',
          expect.stringMatching(/^run\.exe: not a document type the batch reads \(\.docx, \.pdf/),
        ],
        ['documentFiles.2.size', 'empty.txt is empty'],
        ['documentFiles.3.size', 'big.pdf is 50.0 MiB; a document may be at most 50 MiB'],
        ['documentFiles.5.name', 'a.pdf is there twice; each document once'],
        ['documentFiles.6.sha256', expect.stringMatching(/SHA-256/)],
      ]),
    );
  });

  it('refuses more than 200 documents, or more than 1 GiB together', () => {
    const many = Array.from({ length: 201 }, (_, index) => file(`d${index}.md`));
    expect(
      documentFilesUploadBodySchema.safeParse({ documentFiles: many, workflow: 'w' }).error?.issues[0]
        ?.message,
    ).toMatch(/at most 200 documents/);
    const large = Array.from({ length: 21 }, (_, index) => file(`d${index}.pdf`, maxUploadedDocumentBytes));
    expect(
      documentFilesUploadBodySchema.safeParse({ documentFiles: large, workflow: 'w' }).error?.issues[0]
        ?.message,
    ).toMatch(/^the documents are 1050 MiB together; at most 1024 MiB at once/);
  });
});

describe('documentFilesPlan', () => {
  it("lays the documents out as files a manifest names, and the manifest the commit writes last as the batch's start", () => {
    const plan = documentFilesPlan(
      { documentFiles: [file('b.pdf', 5, sha('b')), file('a b.md', 3, sha('c'))], workflow: 'patent-count' },
      'acme',
      options,
    );
    expect(plan.batchId).toMatch(/^documents-[0-9a-f]{8}$/);
    expect(plan.folder).toBe(`inbox/tenants/acme/patent-count/${plan.batchId}/`);
    expect(plan.files.map((entry) => entry.key)).toEqual([`${plan.folder}a b.md`, `${plan.folder}b.pdf`]);
    // A document's arrival starts nothing; the manifest's starts the batch, with the tenant of its prefix.
    for (const entry of plan.files)
      expect(classifyInboxKey(entry.key, plan.documentMetadata)).toMatchObject({ kind: 'ignored' });
    expect(classifyInboxKey(plan.manifestKey, plan.manifestMetadata)).toEqual({
      kind: 'manifest',
      tenant: 'acme',
      workflow: 'patent-count',
      sourceKind: 'jsonl',
      batchName: plan.batchId,
      key: plan.manifestKey,
    });
    // One line per document, its id and file its name: the item a folder's document is.
    expect(plan.manifestText).toBe('{"id":"a b.md","file":"a b.md"}\n{"id":"b.pdf","file":"b.pdf"}\n');
    // The same documents in another order are the same batch; another content is another.
    const again = documentFilesPlan(
      { documentFiles: [file('a b.md', 3, sha('c')), file('b.pdf', 5, sha('b'))], workflow: 'patent-count' },
      'acme',
      options,
    );
    expect(again.batchId).toBe(plan.batchId);
    const changed = documentFilesPlan(
      { documentFiles: [file('a b.md', 3, sha('d')), file('b.pdf', 5, sha('b'))], workflow: 'patent-count' },
      'acme',
      options,
    );
    expect(changed.batchId).not.toBe(plan.batchId);
    expect(
      documentFilesPlan(
        { documentFiles: [file('a.md')], workflow: 'w', batchName: 'mine' },
        'default',
        options,
      ).folder,
    ).toBe('inbox/w/mine/');
  });

  it('says why a stored document is not the one announced', () => {
    const plan = documentFilesPlan(
      { documentFiles: [file('a.md', 3, sha('c'))], workflow: 'w' },
      'default',
      options,
    );
    const planned = plan.files[0]!;
    const checksum = Buffer.from(sha('c'), 'hex').toString('base64');
    const stored = { size: 3, checksumSha256: checksum, metadata: plan.documentMetadata };
    expect(documentMismatch(planned, stored, plan.documentMetadata)).toBeUndefined();
    expect(
      documentMismatch(planned, { ...stored, checksumSha256: undefined }, plan.documentMetadata),
    ).toBeUndefined();
    expect(documentMismatch(planned, undefined, plan.documentMetadata)).toBe('not uploaded yet');
    expect(documentMismatch(planned, { ...stored, size: 4 }, plan.documentMetadata)).toBe(
      '4 bytes stored, 3 announced',
    );
    expect(documentMismatch(planned, { ...stored, checksumSha256: 'x' }, plan.documentMetadata)).toBe(
      'its SHA-256 is not the one announced',
    );
    expect(
      documentMismatch(
        planned,
        { ...stored, metadata: { ...plan.documentMetadata, 'opflow-batch': 'other' } },
        plan.documentMetadata,
      ),
    ).toBe("its opflow-batch metadata is not this upload's");
  });
});
