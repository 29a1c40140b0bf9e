// The schedules routes of the OpenAPI document (SPEC 2.5): a run request's
// `schedules` entries become schedules of the account, listed, described,
// paused, resumed, triggered and deleted here.
import { type Json, jsonBody, operation, queryParams, ref, toSchema } from './operations';
import { SCHEDULE_ID, scheduleListQuerySchema, schedulePauseSchema } from '../schemas/request';
import { runResultSchema } from '../schemas/response';
import {
  scheduleDetailSchema,
  scheduleListSchema,
  scheduleTriggeredSchema,
  scheduleViewSchema,
} from '../schemas/schedule-response';

const scheduleId = ref('parameters', 'ScheduleId');
const NOT_FOUND = "No such schedule for this account (another account's schedule is one).";
const MALFORMED = 'A malformed schedule id.';

export function schedulePaths(): Json {
  return { ...scheduleReadPaths(), ...scheduleActionPaths() };
}

/** The account's schedules, one schedule, its deletion. */
function scheduleReadPaths(): Json {
  return {
    '/schedules': {
      get: operation('get', {
        id: 'listSchedules',
        tag: 'schedules',
        summary: "List the account's schedules",
        description:
          'Every schedule until it is deleted, a one-time one that has run included (with no next run). Cursor-paged like GET /tasks.',
        parameters: queryParams(scheduleListQuerySchema),
        responses: { 200: { description: 'One page of schedules.', content: jsonBody('ScheduleList') } },
        errors: {
          400: 'An invalid or unknown query parameter.',
          422: 'A cursor of the right shape that this service did not hand out for this listing.',
        },
      }),
    },
    '/schedules/{id}': {
      get: operation('get', {
        id: 'getSchedule',
        tag: 'schedules',
        summary: 'A schedule: its spec, next runs and the tasks it started',
        parameters: [scheduleId],
        responses: { 200: { description: 'The schedule.', content: jsonBody('ScheduleDetail') } },
        errors: { 400: MALFORMED, 404: NOT_FOUND },
      }),
      delete: operation('delete', {
        id: 'deleteSchedule',
        tag: 'schedules',
        summary: 'Delete a schedule (SPEC 2.5: cancel it)',
        description:
          'It starts no more tasks. A task of it that is running goes on (cancel it with POST /tasks/{id}/cancel); its tasks stay listed.',
        parameters: [scheduleId],
        responses: { 204: { description: 'Deleted.' } },
        errors: { 400: MALFORMED, 404: NOT_FOUND },
      }),
    },
  };
}

/** What a schedule can be told: pause, unpause, trigger. */
function scheduleActionPaths(): Json {
  return {
    '/schedules/{id}/pause': {
      post: operation('post', {
        id: 'pauseSchedule',
        tag: 'schedules',
        summary: 'Pause a schedule: its times pass without a task until it is unpaused',
        parameters: [scheduleId],
        body: 'PauseScheduleRequest',
        bodyOptional: true,
        responses: { 200: { description: 'The schedule, paused.', content: jsonBody('ScheduleDetail') } },
        errors: { 400: 'A malformed schedule id or body.', 404: NOT_FOUND },
      }),
    },
    '/schedules/{id}/unpause': {
      post: operation('post', {
        id: 'unpauseSchedule',
        tag: 'schedules',
        summary: 'Resume a paused schedule from its next time (the times it missed while paused are not run)',
        parameters: [scheduleId],
        responses: { 200: { description: 'The schedule, running again.', content: jsonBody('ScheduleDetail') } },
        errors: { 400: MALFORMED, 404: NOT_FOUND },
      }),
    },
    '/schedules/{id}/trigger': {
      post: operation('post', {
        id: 'triggerSchedule',
        tag: 'schedules',
        summary: 'Start a task of the schedule now, outside its times',
        description:
          'Even while the schedule is paused or one of its tasks is running (whatever its overlap); the tasks take turns in the session.',
        parameters: [scheduleId],
        responses: { 202: { description: 'A task was started.', content: jsonBody('ScheduleTriggered') } },
        errors: { 400: MALFORMED, 404: NOT_FOUND },
      }),
    },
  };
}

export function scheduleSchemas(): Json {
  return {
    RunResult: toSchema(runResultSchema),
    Schedule: toSchema(scheduleViewSchema),
    ScheduleDetail: toSchema(scheduleDetailSchema),
    ScheduleList: toSchema(scheduleListSchema),
    ScheduleTriggered: toSchema(scheduleTriggeredSchema),
    PauseScheduleRequest: toSchema(schedulePauseSchema),
  };
}

export function scheduleParameters(): Json {
  return {
    ScheduleId: {
      name: 'id',
      in: 'path',
      required: true,
      description: 'A schedule id (sched_…).',
      schema: { type: 'string', pattern: SCHEDULE_ID.source },
    },
  };
}
