/** Admission: the key's rate budget and the order calls wait in for it (ARCHITECTURE.md). */
export * from './acquire-token';
export * from './budget-filler';
export * from './nudge';
export * from './parked-jobs';
export * from './poll-price';
export * from './priority';
export * from './release';
export * from './reserve-next';
