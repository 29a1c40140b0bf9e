// A run request's schedule entry as a Temporal Schedule: its spec (a cron
// string in a time zone, or one exact instant in UTC), its action (a
// scheduledRun workflow with the request it runs), its overlap policy, and the
// memo and search attributes it is found and shown by.
import type { ScheduleOptions, ScheduleOverlapPolicy } from '@temporalio/client';
import { MONTHS } from '@temporalio/client';
import type { ScheduledRunInput } from '../../../workflows/scheduled-run';
import { SEARCH_ATTRIBUTES } from '../../../workflows/types';
import type { ScheduleWhen } from './schedule-spec';

export type Overlap = 'skip' | 'buffer_one' | 'allow_all';

const OVERLAP: Record<Overlap, ScheduleOverlapPolicy> = {
  skip: 'SKIP',
  buffer_one: 'BUFFER_ONE',
  allow_all: 'ALLOW_ALL',
};

/** What a schedule's memo keeps for its listing and description (the memo is encrypted by the payload codec). */
export interface ScheduleMemo {
  account: string;
  session: string;
  /** The entry's `schedule` as the request gave it. */
  schedule: number | string;
  kind: 'once' | 'cron';
  timezone?: string;
  overlap: Overlap;
  preview: string;
  createdAt: string;
  /** The task of the request that made it. */
  createdBy: string;
}

export interface ScheduleDraft {
  scheduleId: string;
  when: ScheduleWhen;
  overlap: Overlap;
  memo: ScheduleMemo;
  run: ScheduledRunInput;
  taskQueue: string;
}

export function scheduleOptions(d: ScheduleDraft): ScheduleOptions {
  return {
    scheduleId: d.scheduleId,
    spec: specOf(d.when),
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledRun',
      workflowId: d.scheduleId,
      taskQueue: d.taskQueue,
      args: [d.run],
    },
    policies: { overlap: OVERLAP[d.overlap] },
    // A one-time schedule fires once, then stays (paused by nothing, with no run left) to show its task.
    ...(d.when.kind === 'once' && { state: { remainingActions: 1 } }),
    memo: { ...d.memo },
    searchAttributes: {
      [SEARCH_ATTRIBUTES.account]: [d.memo.account],
      [SEARCH_ATTRIBUTES.session]: [d.memo.session],
      [SEARCH_ATTRIBUTES.schedule]: [d.scheduleId],
    },
  } as ScheduleOptions;
}

function specOf(when: ScheduleWhen): ScheduleOptions['spec'] {
  if (when.kind === 'cron') return { cronExpressions: [when.cron], timezone: when.timezone };
  // Schedules work in whole seconds: the instant, rounded up, so a run never comes early.
  const at = new Date(Math.ceil(when.at.getTime() / 1000) * 1000);
  return {
    calendars: [
      {
        year: at.getUTCFullYear(),
        month: MONTHS[at.getUTCMonth()],
        dayOfMonth: at.getUTCDate(),
        hour: at.getUTCHours(),
        minute: at.getUTCMinutes(),
        second: at.getUTCSeconds(),
      },
    ],
  };
}
