// Cron schedules of workflows (StartWorkflowExecution.cronSchedule): the next run
// starts at the next cron time after the previous run closed. Times are UTC
// unless the expression carries CRON_TZ=.
import { compileScheduleSpec } from '../schedules/spec';
import { invalidArgument } from '../errors';

export function validateCron(cron: string): void {
  try {
    compileScheduleSpec({ cronString: [cron] });
  } catch (err) {
    throw invalidArgument(`Invalid CronSchedule: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export function nextCronTime(cron: string, now: number, _startTime: number): number | undefined {
  return compileScheduleSpec({ cronString: [cron] }).nextNominal(now);
}
