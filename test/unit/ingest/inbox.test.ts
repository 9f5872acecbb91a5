import { describe, expect, it } from 'vitest';
import { classifyInboxKey, inboxFolderOf, inboxOptions } from '../../../shared/ingest/inbox';

describe('the tenant of an inbox upload is where it was written', () => {
  it('inbox/<workflow>/... is the default tenant, inbox/tenants/<tenant>/... that tenant', () => {
    expect(classifyInboxKey('inbox/patent-count/b/m.jsonl')).toMatchObject({
      kind: 'manifest',
      tenant: 'default',
    });
    const entry = classifyInboxKey('inbox/tenants/acme/patent-count/b/doc.md');
    expect(entry).toMatchObject({
      kind: 'document',
      tenant: 'acme',
      workflow: 'patent-count',
      batchName: 'b',
      folder: 'inbox/tenants/acme/patent-count/b/',
      documentId: 'doc.md',
    });
    expect(inboxOptions({}, entry as { tenant: string }).tenant).toBe('acme');
    expect(inboxFolderOf('acme', 'patent-count', 'b')).toBe('inbox/tenants/acme/patent-count/b/');
    expect(inboxFolderOf('default', 'patent-count', 'b')).toBe('inbox/patent-count/b/');
  });

  it('metadata naming another tenant than the prefix is not obeyed: the upload is left alone, saying why', () => {
    expect(classifyInboxKey('inbox/patent-count/b/m.jsonl', { 'opflow-tenant': 'acme' })).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining(
        'opflow-tenant metadata "acme" is not the tenant of the prefix written to (default)',
      ),
    });
    expect(
      classifyInboxKey('inbox/tenants/acme/patent-count/b/m.jsonl', { 'opflow-tenant': 'acme' }),
    ).toMatchObject({ kind: 'manifest', tenant: 'acme' });
  });

  it('a prefix that is not a tenant name is left alone, naming it', () => {
    expect(classifyInboxKey('inbox/tenants/a b/patent-count/b/m.jsonl')).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('"a b" is not a tenant name'),
    });
  });
});
