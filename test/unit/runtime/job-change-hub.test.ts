import { describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import { createJobChangeHub } from '../../../shared/runtime/job-change-hub';
import { makeJob } from '../../support/factories';

describe('job-change hub', () => {
  it('tells every listener, until it unsubscribes', () => {
    const hub = createJobChangeHub();
    const a: string[] = [];
    const b: string[] = [];
    const stopA = hub.subscribe((job) => a.push(job.id));
    hub.subscribe((job) => b.push(job.id));
    hub.emit(makeJob({ id: 'one' }));
    stopA();
    hub.emit(makeJob({ id: 'two' }));
    expect(a).toEqual(['one']);
    expect(b).toEqual(['one', 'two']);
  });

  it('keeps telling the others when a listener throws', () => {
    const hub = createJobChangeHub();
    const seen: Job[] = [];
    hub.subscribe(() => {
      throw new Error('a broken display');
    });
    hub.subscribe((job) => seen.push(job));
    expect(() => hub.emit(makeJob({ id: 'three' }))).not.toThrow();
    expect(seen.map((job) => job.id)).toEqual(['three']);
  });
});
