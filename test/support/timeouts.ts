/**
 * Time limits of tests that start real processes (opflow children, DynamoDB Local's JVM, fauxqs,
 * bundled functions). On the shared 2-core machine, with other suites beside them, one such test
 * can take many times its usual time: the limit only stops a test that hangs, so it is generous.
 * The tests assert no times (benchmarks measure those).
 */
export const REAL_PROCESS_TIMEOUT_MS = 180_000;
