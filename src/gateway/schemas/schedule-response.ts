// Response bodies of the schedules routes as zod schemas, for the OpenAPI document
// (openapi-schedules.ts), each pinned to the type the schedule service returns by a
// compile-time check, as in response-schemas.ts.
import { z } from 'zod';
import type { ScheduleDetail, ScheduleService, ScheduleView } from '../services/schedule-service';
import { SCHEDULE_OVERLAPS } from '../../common/contracts/run-request';
import { same } from './same-type';

export const scheduleViewSchema = z
  .object({
    schedule_id: z.string().describe('sched_ and 32 hex digits.'),
    session: z.string().describe('The session its tasks run in: that of the request that made it.'),
    schedule: z
      .union([z.number(), z.string()])
      .describe(
        "The entry's `schedule` as the request gave it: seconds from then, an ISO 8601 date-time, or a cron string.",
      ),
    timezone: z
      .string()
      .nullable()
      .describe('IANA time zone of a cron schedule (UTC when the entry gave none); null for a one-time schedule.'),
    overlap: z
      .enum(SCHEDULE_OVERLAPS)
      .describe('What a run does when the last task of the schedule is still going (a one-time schedule has skip).'),
    message_preview: z.string().describe("The first 200 characters of the entry's message."),
    paused: z.boolean(),
    state: z
      .enum(['active', 'paused', 'done'])
      .describe(
        'active: it will run; paused: its times pass without a task until it is unpaused; done: it has no run left (a one-time schedule that ran).',
      ),
    note: z.string().nullable().describe('The note of the latest pause or unpause.'),
    created_at: z.string().describe('ISO 8601.'),
    next_run_at: z
      .string()
      .nullable()
      .describe(
        'ISO 8601 UTC; null when it has no run left (a one-time schedule that ran). A paused schedule still shows the time it would run at.',
      ),
  })
  .describe("A schedule: one entry of a run request's `schedules`.");
same<z.output<typeof scheduleViewSchema>, ScheduleView>(true);

export const scheduleDetailSchema = scheduleViewSchema
  .extend({
    next_runs: z.array(z.string()).describe('Its next run times (up to 5), ISO 8601 UTC.'),
    runs: z.number().int().min(0).describe('The tasks it has started (trigger included).'),
    recent_tasks: z
      .array(
        z.object({
          task_id: z.string(),
          scheduled_at: z.string().describe('The time the schedule gave, ISO 8601.'),
          started_at: z.string().describe('When the task was started, ISO 8601.'),
        }),
      )
      .describe(
        'The latest tasks it started (Temporal keeps the last 10), oldest first; every one: GET /tasks?schedule={id}.',
      ),
    running_tasks: z.array(z.string()).describe('The ids of its tasks still running.'),
  })
  .describe('A schedule with its next runs and the tasks it started.');
same<z.output<typeof scheduleDetailSchema>, ScheduleDetail>(true);

export const scheduleListSchema = z
  .object({
    schedules: z.array(scheduleViewSchema),
    next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last page.'),
  })
  .describe("The account's schedules.");
same<
  Omit<z.output<typeof scheduleListSchema>, 'schedules'>,
  Omit<Awaited<ReturnType<ScheduleService['list']>>, 'schedules'>
>(true);

export const scheduleTriggeredSchema = z
  .object({ schedule_id: z.string(), triggered: z.literal(true) })
  .describe('A task of the schedule was started now (GET /schedules/{id} or GET /tasks?schedule={id} shows it).');
