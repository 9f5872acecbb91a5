/**
 * Figures printed or written from a run instead of kept by hand in a page: the slowest test files
 * from vitest's JSON results (scripts/test-slowest.ts) and bench/bundle-sizes.md's figures block
 * (scripts/bundle-sizes-page.ts).
 */
import { describe, expect, it } from 'vitest';
import { figuresBlock, withFigures } from '../../../scripts/bundle-sizes-page';
import { parseResults, slowestReport, suiteOf } from '../../../scripts/test-slowest';

const file = (name: string, startTime: number, seconds: number, tests: number, status = 'passed') => ({
  name: `/repo/${name}`,
  status,
  startTime,
  endTime: startTime + seconds * 1000,
  assertionResults: Array.from({ length: tests }, () => ({})),
  message: '',
});

describe('test:slowest', () => {
  it('sums each suite and sorts the files by their time', () => {
    const results = parseResults(
      JSON.stringify({
        startTime: Date.UTC(2026, 10, 28, 12),
        numTotalTests: 7,
        numFailedTests: 1,
        testResults: [
          file('test/unit/a.test.ts', Date.UTC(2026, 10, 28, 12), 2, 3),
          file('test/e2e/aws/ingest.test.ts', Date.UTC(2026, 10, 28, 12), 600, 2),
          file('test/e2e/aws/crash.test.ts', Date.UTC(2026, 10, 28, 12, 10), 200, 1, 'failed'),
          file('test/unit/b.test.ts', Date.UTC(2026, 10, 28, 12, 20), 0.5, 1),
        ],
      }),
      'results.json',
    );
    const report = slowestReport(results, '/repo', 2);
    expect(report).toContain('Run of 2026-11-28T12:00:00Z: 4 files, 7 tests (1 failed), 1,201 s from start');
    expect(report).toContain('803 s summed over files');
    expect(report).toContain('| `test/e2e/aws` | 2 | 800 | 100% | `ingest.test.ts` 600 s |');
    expect(report).toContain('| `test/unit` | 2 | 2.5 | 0% | `a.test.ts` 2.0 s |');
    expect(report.split('The 2 slowest files:')[1]).toBe(
      '\n\n| file | seconds | tests | |\n|---|---:|---:|---|\n' +
        '| `test/e2e/aws/ingest.test.ts` | 600 | 2 |  |\n| `test/e2e/aws/crash.test.ts` | 200 | 1 | failed |',
    );
    expect([suiteOf('test/unit/x.test.ts'), suiteOf('test/integration/ingest/x.test.ts')]).toEqual([
      'test/unit',
      'test/integration/ingest',
    ]);
  });

  it('names the file and the field when the results are not vitest JSON', () => {
    expect(() => parseResults('{', 'r.json')).toThrow(/^r\.json: not JSON/);
    expect(() =>
      parseResults('{"startTime":1,"numTotalTests":1,"numFailedTests":0,"testResults":[{}]}', 'r.json'),
    ).toThrow(/^r\.json: testResults\.0\.name: .*not vitest's JSON results$/);
  });
});

describe('bundle-sizes --page', () => {
  it("replaces only the page's figures block with the run's date, build and rows", () => {
    const block = figuresBlock(
      {
        reports: [{ name: 'worker', startBytes: 975_769, gzipBytes: 332_902 }],
        baselines: { '(SDK floor: DynamoDB + SQS)': 186_880 },
        budgets: { worker: 955 },
        cold: {
          emptyCpuMs: 35,
          cpuMedians: { worker: 182, '(SDK floor: DynamoDB + SQS)': 75 },
          loads: [20.2, 21.5],
        },
        rounds: 9,
      },
      new Date('2026-11-28T15:00:00Z'),
      'abc1234',
    );
    expect(block).toMatch(
      /^<!-- figures -->\nFigures of 2026-11-28 \(build abc1234, Node \d+\.\d+, 9 rounds, load average 20\.2 to 21\.5 on \d+ shared cores;/,
    );
    expect(block).toContain('| SDK floor: DynamoDB + SQS | 182.5 KiB | | | 75 | 2.1 |');
    expect(block).toContain('| worker | 952.9 KiB | 325.1 KiB | 955 | 182 | 5.2 |');
    const page = 'intro\n<!-- figures -->\nold\n<!-- /figures -->\n- prose kept\n';
    expect(withFigures(page, block)).toBe(`intro\n${block}\n- prose kept\n`);
    expect(() => withFigures('no block', block)).toThrow(
      'bench/bundle-sizes.md has no <!-- figures --> ... <!-- /figures --> block',
    );
  });
});
