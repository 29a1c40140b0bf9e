// client.schedules: the schedules a run request's `schedules` made (SPEC 2.5):
// the cursor-paged list, one schedule with its next runs and tasks, and
// pausing, resuming, triggering and deleting it.
import type { HttpCore, RequestOptions } from './http';
import type { ListSchedulesQuery, ScheduleDetail, ScheduleList, ScheduleTriggered, ScheduleView } from './types';
import { eachItem } from './paging';

const schedulePath = (id: string, rest = '') => `/schedules/${encodeURIComponent(id)}${rest}`;

export class Schedules {
  constructor(private readonly core: HttpCore) {}

  /** One page of the account's schedules; pass `next_cursor` back as `cursor`. */
  list(query: ListSchedulesQuery = {}, opts: RequestOptions = {}): Promise<ScheduleList> {
    return this.core.json('GET', '/schedules', { ...opts, query: { ...query } });
  }

  /** Every schedule, fetching pages as the iteration goes. */
  listAll(query: Omit<ListSchedulesQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncGenerator<ScheduleView> {
    return eachItem(async (cursor) => {
      const page = await this.list({ ...query, cursor }, opts);
      return { items: page.schedules, next_cursor: page.next_cursor };
    });
  }

  /** The schedule, its next runs and the tasks it started (a NotFoundError for another account's). */
  get(id: string, opts: RequestOptions = {}): Promise<ScheduleDetail> {
    return this.core.json('GET', schedulePath(id), opts);
  }

  /** Deletes the schedule: it starts no more tasks; one of its tasks that is running goes on. */
  async delete(id: string, opts: RequestOptions = {}): Promise<void> {
    await this.core.json('DELETE', schedulePath(id), opts);
  }

  /** Pauses it (its times pass without a task), with a note saying why if given. */
  pause(id: string, note?: string, opts: RequestOptions = {}): Promise<ScheduleDetail> {
    return this.core.json('POST', schedulePath(id, '/pause'), {
      ...opts,
      body: note === undefined ? undefined : { note },
    });
  }

  /** Resumes it from its next time. */
  unpause(id: string, opts: RequestOptions = {}): Promise<ScheduleDetail> {
    return this.core.json('POST', schedulePath(id, '/unpause'), opts);
  }

  /** Starts a task of the schedule now, even while it is paused or one of its tasks runs. */
  trigger(id: string, opts: RequestOptions = {}): Promise<ScheduleTriggered> {
    return this.core.json('POST', schedulePath(id, '/trigger'), opts);
  }
}
