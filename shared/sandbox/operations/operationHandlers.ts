/**
 * Every catalogue operation's handler, one table. The type makes sure none is missing.
 */
import { createChatOperations } from './chat';
import type { OperationHandlers } from './contract';
import { createDisclosureOperations } from './disclosure';
import { createFindSolutionOperations } from './findSolution';
import { createMaterialsOperations } from './materials';
import { createNoveltyOperations } from './novelty';
import { createPatentCountOperations } from './patentCount';
import { createPreResearchOperations } from './preResearch';

/** Fresh handlers with empty state (one set per sandbox). */
export function createOperationHandlers(): OperationHandlers {
  return {
    ...createChatOperations(),
    ...createFindSolutionOperations(),
    ...createDisclosureOperations(),
    ...createMaterialsOperations(),
    ...createPreResearchOperations(),
    ...createNoveltyOperations(),
    ...createPatentCountOperations(),
  };
}
