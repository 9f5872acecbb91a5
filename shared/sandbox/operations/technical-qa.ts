/**
 * Technical Q&A, ai36-1 → ai36-2. ai36-1 submits a technical question and answers a `task_id`;
 * the answer takes a minute or two (question analysis, retrieval, writing). ai36-2 polls:
 * `task_status` 1 while it runs, 3 when it failed (a `[sandbox:fail]` marker in the question), 2
 * with the answer: a title, the question split into queries and concepts, a Markdown summary citing
 * its references as [1], [2]..., the references themselves (patents, papers and web pages, as
 * `rag_source` asks, with the upper-case field names of the platform's own example), related
 * questions and an application table. The same question answers the same way (seeded by its text).
 */
import * as z from 'zod';
import { isoDate, organisation, patentNumber } from '../prior-art';
import { hashText, SeededRandom } from '../seeded';
import { type Stage, stageSchema, stageState } from '../stages';
import { answerText, capitalise, keywordsOf, titleOf } from '../text-content';
import { failsAt, triggersIn, withoutMarkers } from '../triggers';
import { json, type OperationContext, type OperationHandlers, type RegistryFactory } from './contract';

type TechnicalQaOperations = Pick<OperationHandlers, 'ai36-1TechnicalQaSubmit' | 'ai36-2TechnicalQaReport'>;

type Source = 'patent' | 'paper' | 'website';

interface Question {
  owner: string;
  question: string;
  lang: string;
  sources: Source[];
  inputHash: string;
  stage: Stage;
}

const questionSchema = z.strictObject({
  owner: z.string().min(1),
  question: z.string(),
  lang: z.string(),
  sources: z.array(z.enum(['patent', 'paper', 'website'])),
  inputHash: z.string(),
  stage: stageSchema,
}) satisfies z.ZodType<Question>;

const FIRST_REF = 'ai36-2';

/** One reference of the answer, as the platform's example writes it (upper-case names). */
function reference(random: SeededRandom, source: Source, keywords: string[], index: number) {
  const [k1 = 'technology', k2 = 'performance'] = random.sample(
    keywords.length > 1 ? keywords : [...keywords, 'performance'],
    2,
  );
  const id = random.uuid();
  const pbd = isoDate(random, 2015, 2025);
  if (source === 'patent') {
    const pn = patentNumber(random);
    return {
      APD: isoDate(random, 2012, Number(pbd.slice(0, 4))),
      PBD: pbd,
      LINK: `https://eureka.zhihuiya.com/view/#/fullText'figures/?patentId=${id}`,
      TITLE: `${capitalise(k1)} arrangement improving ${k2} (${pn})`,
      CONTENT: `Discloses ${k1} arranged to improve ${k2}; the embodiments give the process parameters and the measured effect.`,
      SOLUTION_ID: id,
      SOLUTION_TYPE: 'PATENT',
      PDF_IMAGE_COUNT: random.int(0, 12),
      org_info: [organisation(random)],
    };
  }
  if (source === 'paper') {
    return {
      APD: '',
      PBD: pbd,
      LINK: `https://eureka.zhihuiya.com/literature/#/?paperId=${id}`,
      TITLE: `${capitalise(k2)} of ${k1}: an experimental study`,
      CONTENT: `Measures how ${k1} affects ${k2} over ${random.int(3, 40)} samples and compares the result with earlier work.`,
      SOLUTION_ID: id,
      SOLUTION_TYPE: 'PAPER',
      PDF_IMAGE_COUNT: 0,
    };
  }
  return {
    APD: '',
    PBD: pbd,
    LINK: `https://www.example.org/articles/${k1.replace(/\W+/g, '-')}-${index + 1}`,
    TITLE: `What ${k1} means for ${k2}`,
    CONTENT: `An overview of ${k1} in practice, with the trade-offs engineers report for ${k2}.`,
    SOLUTION_ID: id,
    SOLUTION_TYPE: 'WEBSITE',
    PDF_IMAGE_COUNT: 0,
  };
}

/** The finished answer of a question. */
function answerOf(context: OperationContext, question: Question) {
  const random = SeededRandom.from(context.seed, question.inputHash, 'ai36-answer');
  const keywords = keywordsOf(question.question, 6);
  const references = Array.from({ length: random.int(3, 6) }, (_, index) =>
    reference(random, question.sources[index % question.sources.length] ?? 'patent', keywords, index),
  );
  const title = titleOf(question.question, 80);
  const paragraphs = references.map(
    (item, index) => `${answerText(`${item.TITLE}. ${question.question}`, random, 2)} [${index + 1}]`,
  );
  const concept = keywords.slice(0, 4);
  return {
    task_status: 2,
    split_query: {
      query: concept.slice(0, 3).map((word) => `${capitalise(word)} in ${title.toLowerCase()}`),
      concept,
    },
    message_response: {
      title,
      modules: ['SUMMARY', 'APPLICATION', 'RECOMMEND'],
      summary: [`### ${title}`, '', answerText(question.question, random, 4), '', ...paragraphs].join('\n\n'),
      recommend: keywords
        .slice(0, 3)
        .map((word) => `How could ${word} be improved further for ${keywords[keywords.length - 1] ?? 'it'}?`),
      references,
      application: [
        ['Product / project', 'Technical effect', 'Where it applies'],
        ...references
          .filter((item) => item.SOLUTION_TYPE === 'PATENT')
          .slice(0, 2)
          .map((item) => [item.TITLE, item.CONTENT, capitalise(keywords[0] ?? 'general use')]),
      ],
      check_summary: '',
      summary_think: `The question asks about ${keywords.slice(0, 3).join(', ')}; the answer weighs the references found.`,
      agent_suggestion: '',
      tech_mind_suggestion: '',
      agent_suggestion_scene: 'TECH_MIND',
    },
  };
}

export function createTechnicalQaOperations(registry: RegistryFactory): TechnicalQaOperations {
  const questions = registry<Question>('qa-tasks', 'task_id', questionSchema);
  return {
    'ai36-1TechnicalQaSubmit': (body, context) => {
      const taskId = context.newId('uuid');
      const triggers = triggersIn(body);
      const question = withoutMarkers(body.input);
      questions.add(taskId, {
        owner: context.owner,
        question,
        lang: body.lang,
        sources: body.rag_source ?? ['patent', 'paper', 'website'],
        inputHash: hashText(`${question}\n${body.lang}\n${(body.rag_source ?? []).join(',')}`),
        stage: context.startStage('ai36-1TechnicalQaSubmit', taskId, failsAt(triggers, 'ai36-2', FIRST_REF)),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai36-2TechnicalQaReport': (body, context) => {
      const question = questions.get(body.task_id, context.owner);
      const state = stageState(question.stage, context.now);
      if (state === 'running') return json({ task_id: body.task_id, task_status: 1 });
      if (state === 'failed') return json({ task_id: body.task_id, task_status: 3 });
      return json({ task_id: body.task_id, ...answerOf(context, question) });
    },
  };
}
