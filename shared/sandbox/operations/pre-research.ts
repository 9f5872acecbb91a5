/**
 * Tech pre-research (quick-search) report, ai34-1/ai34-2 → ai34-3. ai34-1 creates a report and
 * proposes a directory; with `auto_directory` true (the default) generation starts at once, with
 * false it waits for ai34-2 to supply the directory. ai34-3 polls and answers an HTML report link.
 */
import * as z from 'zod';
import { organisation, patentNumber } from '../prior-art';
import { invalidParameter, outOfOrder } from '../sandbox-rejection';
import { hashText, SeededRandom } from '../seeded';
import { type Stage, stageSchema, stageState, upperStatus } from '../stages';
import { answerText, capitalise, keywordsOf, titleOf } from '../text-content';
import { failsAt, mergeTriggers, type Triggers, triggersIn, triggersSchema } from '../triggers';
import { json, type OperationContext, type OperationHandlers, type RegistryFactory } from './contract';

type PreResearchOperations = Pick<
  OperationHandlers,
  'ai34-1QuickSearchReportCreation' | 'ai34-2CreationCustomDir' | 'ai34-3QuickSearchReportQuery'
>;

/** A type alias, not an interface: the response types expect an index signature. */
type DirectoryEntry = {
  key: string;
  name: string;
  source_type: string;
};

interface Report {
  owner: string;
  issue: string;
  inputHash: string;
  triggers: Triggers;
  offered: DirectoryEntry[];
  directory?: DirectoryEntry[];
  stage?: Stage;
}

const directoryEntrySchema = z.strictObject({
  key: z.string(),
  name: z.string(),
  source_type: z.string(),
}) satisfies z.ZodType<DirectoryEntry>;

const reportSchema = z.strictObject({
  owner: z.string().min(1),
  issue: z.string(),
  inputHash: z.string(),
  triggers: triggersSchema,
  offered: z.array(directoryEntrySchema),
  directory: z.array(directoryEntrySchema).optional(),
  stage: stageSchema.optional(),
}) satisfies z.ZodType<Report>;

const FIRST_REF = 'ai34-3';
const CUSTOM_KEYS = new Set(['TECH_RESEARCH_CUSTOM_MODULE_1', 'TECH_RESEARCH_CUSTOM_MODULE_2']);

function proposedDirectory(issue: string): DirectoryEntry[] {
  const [k1 = 'technology', k2 = 'applications'] = keywordsOf(issue, 2).map(capitalise);
  const model = (key: string, name: string) => ({ key: `TECH_RESEARCH_${key}`, name, source_type: 'model' });
  return [
    model('TECHNICAL_BACKGROUND', `${k1}: background and goals`),
    model('MARKET_ANALYSIS', `${k1}: market demand`),
    model('TECHNOLOGY_STATUS_CHALLENGES', `${k1}: status and challenges`),
    model('EVOLUTION_PATH', `${k1}: evolution path`),
    model('HEAD_PLAYER_ANALYSIS', `${k1}: leading players`),
    model('TECHNICAL_SCHEME_REVIEW', `${k1}: technical schemes`),
    model('KEY_PATENT_INTERPRETATION', `${k1}: key patents`),
    model('IDEA_SUMMARY', `${k1}: innovation directions`),
    { key: 'TECH_RESEARCH_CUSTOM_MODULE_1', name: `${k1} and ${k2}: trade-offs`, source_type: 'customize' },
    { key: 'TECH_RESEARCH_CUSTOM_MODULE_2', name: `${k2}: application scenarios`, source_type: 'customize' },
  ];
}

export function createPreResearchOperations(registry: RegistryFactory): PreResearchOperations {
  const reports = registry<Report>('pre-research', 'report_id', reportSchema);

  const analysis = (context: OperationContext, report: Report) => {
    const random = SeededRandom.from(context.seed, report.inputHash, 'ai34-analysis');
    const players = [0, 1, 2, 3].map(() => ({ ...organisation(random), patent_count: random.int(20, 400) }));
    const patents = [0, 1, 2].map(() => ({
      pn: patentNumber(random),
      title: titleOf(report.issue, 60),
      score: random.int(60, 99),
    }));
    return { head_player_analysis: { players }, key_patent_interpretation: { patents } };
  };

  const publishReport = (context: OperationContext, reportId: string, report: Report) =>
    context.publish(`pre-research:${reportId}`, () => {
      const random = SeededRandom.from(context.seed, report.inputHash, 'ai34-report');
      return {
        fileName: `pre-research-${reportId.slice(0, 8)}.html`,
        format: 'html',
        outline: {
          title: titleOf(report.issue, 120),
          subtitle: 'Technology pre-research report (opflow sandbox)',
          sections: (report.directory ?? report.offered).map((entry) => ({
            heading: entry.name,
            paragraphs: [answerText(`${entry.name}. ${report.issue}`, random, 3)],
          })),
        },
      };
    });

  return {
    'ai34-1QuickSearchReportCreation': (body, context) => {
      const reportId = context.newId('uuid');
      const triggers = triggersIn(body);
      const offered = proposedDirectory(body.technical_issues);
      const report = reports.add(reportId, {
        owner: context.owner,
        issue: body.technical_issues,
        inputHash: hashText(body.technical_issues),
        triggers,
        offered,
      });
      if (body.auto_directory !== false) {
        report.directory = offered;
        report.stage = context.startStage(
          'ai34-1QuickSearchReportCreation',
          reportId,
          failsAt(triggers, 'ai34-3', FIRST_REF),
        );
      }
      return json({ report_id: reportId, analysis_directory: offered }, reportId);
    },

    'ai34-2CreationCustomDir': (body, context) => {
      const report = reports.get(body.report_id, context.owner);
      if (report.stage) {
        throw outOfOrder(
          `report ${body.report_id} is already being generated (ai34-1 was called without auto_directory: false)`,
        );
      }
      const seen = new Set<string>();
      body.analysis_directory.forEach((entry, index) => {
        const offered = report.offered.find((candidate) => candidate.key === entry.key);
        if (!offered)
          throw invalidParameter(
            `analysis_directory[${index}].key: '${entry.key}' was not offered by ai34-1`,
          );
        if (seen.has(entry.key))
          throw invalidParameter(`analysis_directory[${index}].key: '${entry.key}' appears twice`);
        seen.add(entry.key);
        if (!CUSTOM_KEYS.has(entry.key) && entry.name !== offered.name) {
          throw invalidParameter(
            `analysis_directory[${index}].name: only TECH_RESEARCH_CUSTOM_MODULE_1/2 may be renamed`,
          );
        }
      });
      report.directory = body.analysis_directory.map(({ key, name, source_type }) => ({
        key,
        name,
        source_type,
      }));
      report.triggers = mergeTriggers(report.triggers, triggersIn(body));
      report.stage = context.startStage(
        'ai34-2CreationCustomDir',
        body.report_id,
        failsAt(report.triggers, 'ai34-3', FIRST_REF),
      );
      return json({ report_id: body.report_id, analysis_directory: report.directory }, body.report_id);
    },

    'ai34-3QuickSearchReportQuery': (body, context) => {
      const report = reports.get(body.report_id, context.owner);
      if (!report.stage) {
        throw outOfOrder(`report ${body.report_id} waits for its directory: call ai34-2 first`);
      }
      const state = stageState(report.stage, context.now);
      if (state !== 'succeeded') return json({ report_status: upperStatus(state) });
      return json({
        report_status: 'SUCCEED',
        report_url: publishReport(context, body.report_id, report),
        ...analysis(context, report),
      });
    },
  };
}
