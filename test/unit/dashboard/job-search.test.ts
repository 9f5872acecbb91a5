// GET /jobs filters the stores do not index: workflow, source, dates and text, over store pages.
import { describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import type { JobPage, JobStore, ListJobsQuery } from '../../../shared/engine/ports';
import { jobTitle, matcher, searchJobs } from '../../../shared/http/job-search';
import { makeJob, T0 } from '../../support/factories';

/** A store listing `jobs` newest first in pages of the size asked, with index cursors. */
function storeOf(jobs: Job[]): JobStore {
  return {
    list: async (query: ListJobsQuery): Promise<JobPage> => {
      const start = query.cursor === undefined ? 0 : Number(query.cursor);
      const limit = query.limit ?? 50;
      const page = jobs.filter((job) => query.status === undefined || job.status === query.status);
      const slice = page.slice(start, start + limit);
      return start + limit < page.length ? { jobs: slice, cursor: String(start + limit) } : { jobs: slice };
    },
  } as JobStore;
}

describe('job search', () => {
  const day = 24 * 3600_000;
  const jobs = Array.from({ length: 450 }, (_, index) =>
    makeJob({
      id: `job${String(index).padStart(4, '0')}`,
      workflow: index % 3 === 0 ? 'patent-count' : 'novelty-check',
      source: index % 2 === 0 ? 'api' : 'cli',
      input: {
        inline: { text: index % 10 === 0 ? `# Helmet ${index}\nA folding helmet` : `Hinge ${index}` },
      },
      createdAt: T0 + (index % 5) * day,
    }),
  );

  it('pages through matches exactly, limit by limit, with nothing lost or repeated', async () => {
    const store = storeOf(jobs);
    const expected = jobs.filter(matcher({ workflow: 'novelty-check', source: 'api' })).map((job) => job.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await searchJobs(store, {}, { workflow: 'novelty-check', source: 'api' }, 7, cursor);
      expect(page.jobs.length).toBeLessThanOrEqual(7);
      seen.push(...page.jobs.map((job) => job.id));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(expected);
    expect(expected.length).toBeGreaterThan(100);
  });

  it('matches every word of the text in the input, and dates by UTC day', () => {
    const helmet = matcher({ q: 'FOLDING helmet' });
    expect(jobs.filter(helmet)).toHaveLength(45);
    const date = new Date(T0 + day).toISOString().slice(0, 10);
    expect(
      jobs.filter(matcher({ since: date, until: date })).every((job) => job.createdAt === T0 + day),
    ).toBe(true);
  });

  it('refuses a cursor it did not hand out', async () => {
    await expect(searchJobs(storeOf(jobs), {}, { q: 'x' }, 5, 'abc')).rejects.toThrow(RangeError);
  });

  it('titles a job by its input title or first line, else its label', () => {
    expect(jobTitle(makeJob({ input: { inline: { text: '\n# Folding helmet\nbody' } } }))).toBe(
      'Folding helmet',
    );
    expect(jobTitle(makeJob({ input: { inline: { text: 'x', title: 'Given' } } }))).toBe('Given');
    expect(jobTitle(makeJob({ input: { ref: 'reports/x/input.json' }, label: 'big.md' }))).toBe('big.md');
  });
});
