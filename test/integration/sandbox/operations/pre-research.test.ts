/**
 * Pre-research report (ai34-1/ai34-2 → ai34-3) against the sandbox: automatic and custom
 * directories, the HTML report behind the link, out-of-order and unknown report ids.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformCode } from '../../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from '../sandbox-harness';

const ISSUE = 'Research on improving lithium battery energy density';
const STEP_MS = 120_000;

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox({ defaultTaskDuration: { meanMs: STEP_MS, spreadMs: 0 } });
});
afterEach(() => harness.close());

describe('pre-research report', () => {
  it('generates a report from a question and serves it as HTML', async () => {
    const created = await harness.ok('ai34-1', { technical_issues: ISSUE });
    expect(created.report_id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(created.analysis_directory).toHaveLength(10);
    expect(created.analysis_directory[0]).toMatchObject({
      key: 'TECH_RESEARCH_TECHNICAL_BACKGROUND',
      source_type: 'model',
    });

    expect(await harness.ok('ai34-3', { report_id: created.report_id })).toEqual({
      report_status: 'RUNNING',
    });
    harness.advance(STEP_MS);
    const done = await harness.ok('ai34-3', { report_id: created.report_id });
    expect(done.report_status).toBe('SUCCEED');
    expect(done.head_player_analysis.players).toHaveLength(4);
    const page = await harness.get(done.report_url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const html = page.body.toString('utf8');
    expect(html).toContain(`<title>${ISSUE}</title>`);
    expect(html).toContain(created.analysis_directory[1].name);
  });

  it('waits for a custom directory when auto_directory is false', async () => {
    const { report_id, analysis_directory } = await harness.ok('ai34-1', {
      technical_issues: ISSUE,
      auto_directory: false,
    });
    const waiting = await harness.call('ai34-3', { report_id });
    expect(waiting.json.error_msg).toContain('out of order: report');
    expect(waiting.json.error_msg).toContain('ai34-2');

    const renamed = analysis_directory.map((entry: { key: string; name: string }) => ({
      ...entry,
      name: `${entry.name}!`,
    }));
    const refused = await harness.call('ai34-2', {
      report_id,
      technical_issues: ISSUE,
      analysis_directory: renamed,
    });
    expect(refused.json.error_msg).toContain(
      'analysis_directory[0].name: only TECH_RESEARCH_CUSTOM_MODULE_1/2 may be renamed',
    );
    const invented = [{ key: 'TECH_RESEARCH_SOMETHING', name: 'x', source_type: 'model' }];
    expect(
      (await harness.call('ai34-2', { report_id, technical_issues: ISSUE, analysis_directory: invented }))
        .json.error_msg,
    ).toContain("analysis_directory[0].key: 'TECH_RESEARCH_SOMETHING' was not offered");

    const chosen = [
      analysis_directory[0],
      { key: 'TECH_RESEARCH_CUSTOM_MODULE_1', name: 'Safety trade-offs', source_type: 'customize' },
    ];
    const accepted = await harness.ok('ai34-2', {
      report_id,
      technical_issues: ISSUE,
      analysis_directory: chosen,
    });
    expect(accepted).toEqual({ report_id, analysis_directory: chosen });
    const again = await harness.call('ai34-2', {
      report_id,
      technical_issues: ISSUE,
      analysis_directory: chosen,
    });
    expect(again.json.error_msg).toContain('already being generated');

    harness.advance(STEP_MS);
    const done = await harness.ok('ai34-3', { report_id });
    const html = (await harness.get(done.report_url)).body.toString('utf8');
    expect(html).toContain('Safety trade-offs');
    expect(html).not.toContain(analysis_directory[1].name);
  });

  it('fails on [sandbox:fail] and answers 404 for an unknown report id', async () => {
    const { report_id } = await harness.ok('ai34-1', { technical_issues: `${ISSUE} [sandbox:fail]` });
    harness.advance(STEP_MS);
    expect(await harness.ok('ai34-3', { report_id })).toEqual({ report_status: 'FAILED' });
    const unknown = await harness.call('ai34-3', { report_id: 'f70a279b-c000-4a6d-8319-61672debd623' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error_code).toBe(PlatformCode.notFound);
  });
});
