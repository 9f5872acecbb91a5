/**
 * Every catalogue operation's handler, one table. The type makes sure none is missing.
 */
import { createBibliographyOperations } from './bibliography';
import { createChatOperations } from './chat';
import type { OperationHandlers, RegistryFactory } from './contract';
import { createDesignInfringementOperations } from './design-infringement';
import { createDisclosureOperations } from './disclosure';
import { createFeasibilityOperations } from './feasibility';
import { createFindSolutionOperations } from './find-solution';
import { createFtoOperations } from './fto';
import { createMaterialsOperations } from './materials';
import { createNoveltyOperations } from './novelty';
import { createPatentCountOperations } from './patent-count';
import { createPatentStatusOperations } from './patent-status';
import { createPreResearchOperations } from './pre-research';
import { createSpecificationOperations } from './specification';
import { createTechnicalQaOperations } from './technical-qa';
import { createTranslationOperations } from './translation';

/** Fresh handlers (one set per sandbox), keeping their records in registries made by `registry`. */
export function createOperationHandlers(registry: RegistryFactory): OperationHandlers {
  return {
    ...createChatOperations(registry),
    ...createFindSolutionOperations(registry),
    ...createDisclosureOperations(registry),
    ...createMaterialsOperations(registry),
    ...createPreResearchOperations(registry),
    ...createNoveltyOperations(registry),
    ...createFtoOperations(registry),
    ...createTechnicalQaOperations(registry),
    ...createSpecificationOperations(registry),
    ...createFeasibilityOperations(registry),
    ...createDesignInfringementOperations(registry),
    ...createTranslationOperations(),
    ...createPatentCountOperations(),
    ...createBibliographyOperations(),
    ...createPatentStatusOperations(),
  };
}
