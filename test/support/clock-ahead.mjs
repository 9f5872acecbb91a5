// Preload (node --import) that moves this process's clock: Date.now() and `new Date()` read
// CLOCK_AHEAD_MS milliseconds ahead of the machine's time (negative: behind). The end-to-end tests
// start a real `opflow` with it to play a process whose clock is wrong; timers are not affected.
const aheadMs = Number(process.env.CLOCK_AHEAD_MS ?? 0);
if (!Number.isFinite(aheadMs))
  throw new Error(`CLOCK_AHEAD_MS must be a number of milliseconds, got ${process.env.CLOCK_AHEAD_MS}`);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
class ClockAheadDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + aheadMs);
    else super(...args);
  }
  static now() {
    return realNow() + aheadMs;
  }
}
globalThis.Date = ClockAheadDate;
