/**
 * What a job stopped at its `maxUnits` says: which cap stopped it and what to change. A job whose
 * cap was lowered to what was left of its schedule's or webhook source's day cap names that day cap
 * (its figure, the day's spend, when the spend falls below it), not only the job's own figure.
 */
import type { Job } from './job-record';

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export function costCapMessage(job: Job): string {
  const billed = `the job was billed ${job.usage.billedUnits} units`;
  const where = `it stopped before step "${job.step}"`;
  const origin = job.costCap;
  const maxUnits = job.maxUnits;
  if (origin && maxUnits !== undefined) {
    const who = `${origin.owner} ${origin.name}`;
    const perDay = origin.maxUnitsPerDay;
    const perRun = origin.maxUnitsPerRun;
    // The day cap stopped it when what was left of it was below the run cap (or there is none).
    if (perDay !== undefined && (perRun === undefined || maxUnits < perRun)) {
      const spent = origin.spentToday ?? perDay - maxUnits;
      const frees =
        origin.dayFreesAt === undefined
          ? 'the cap counts the jobs of the last 24 hours, so it frees up as they age out'
          : `the 24 hours' spend falls below it at ${utc(origin.dayFreesAt)} if nothing more is billed`;
      const config = origin.owner === 'schedule' ? 'schedules' : 'webhooks';
      return `day cost cap of ${who} reached: maxUnitsPerDay is ${perDay}, its jobs of the last 24 hours had been billed ${spent} units when this one started, so this job could spend ${maxUnits}; ${billed} and ${where}. ${frees[0]!.toUpperCase()}${frees.slice(1)}; then retry it (opflow retry ${job.id} --max-units <more>), or raise maxUnitsPerDay of ${origin.name} in opflow.config.json (${config})`;
    }
    if (perRun !== undefined)
      return `run cost cap of ${who} reached: maxUnitsPerRun is ${perRun}; ${billed} and ${where} (retry it with a higher --max-units to go on from there, or raise maxUnitsPerRun of ${origin.name} in opflow.config.json)`;
  }
  return `cost cap reached: ${billed}, its maxUnits is ${maxUnits}; ${where} (retry it with a higher --max-units to go on from there)`;
}
