// The end of a task's event stream, as Temporal decides it. A run publishes its
// own terminal event (agent_completed or agent_error) before it closes; a run
// that was terminated, timed out or deleted never does, and a run whose end was
// published while Redis was down left none on the relay. Once Temporal says
// the run has closed, the gateway publishes the missing end as the run's own
// `end` producer: if the run did publish it, the relay skips this copy, so
// every stream sees one terminal event, with one seq. An end that never
// reached the relay may not be all it lost (Redis was down when the run
// ended): what the stream lacks of the run's record (its result's events, from
// Temporal) is published first, marked `recovered`, as the run itself does
// when Redis is back before it ends.
import type { Client, Connection } from '@temporalio/client';
import type { EventPublisher } from '../../common/relay/publisher';
import { END_PRODUCER } from '../../common/relay/publisher';
import { TERMINAL_EVENTS, type AgentEventBody } from '../../common/relay/events';
import type { StatusCache } from '../../common/relay/status-cache';
import type { TaskView } from '../../../workflows/types';
import { closedRunView } from './closed-run';
import { missingEvents } from '../../common/relay/relay-recovery';
import { recordedEvents } from './run-record';

export class RunEnds {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly publisher: EventPublisher,
    private readonly cache: StatusCache,
  ) {}

  /**
   * The seq of the task's terminal event once its run has closed (published
   * here when it was missing); undefined while the run is open, or when
   * Temporal or Redis cannot be asked (the stream goes on and asks again).
   */
  async closedAt(taskId: string): Promise<number | undefined> {
    const view = await this.closedView(taskId);
    if (!view) return undefined;
    const last = await this.publisher.lastEvent(taskId);
    if (last && TERMINAL_EVENTS.has(last.type)) return last.seq;
    await this.recover(taskId, view).catch(() => undefined);
    // In the task's current epoch: a rewound task's earlier end no longer ends its stream.
    const epoch = await this.publisher.epochPrefix(taskId);
    const { added, lastSeq } = await this.publisher.publish(taskId, view.session, `${epoch}${END_PRODUCER}`, 0, [
      terminalEvent(view),
    ]);
    if (added > 0) return lastSeq;
    const now = await this.publisher.lastEvent(taskId);
    return now && TERMINAL_EVENTS.has(now.type) ? now.seq : undefined;
  }

  /** Publishes what the stream lacks of the closed run's record, as the run's own `recovered` producer would. */
  private async recover(taskId: string, view: TaskView): Promise<void> {
    const record = await recordedEvents(this.client, this.connection, taskId, view.status);
    const stream = await this.publisher.readAll(taskId);
    if (!stream || !record.length) return;
    const missing = missingEvents(stream, record).map((e) => ({ ...e, recovered: true }) as unknown as AgentEventBody);
    await this.publisher.publish(
      taskId,
      view.session,
      `${await this.publisher.epochPrefix(taskId)}recovered`,
      0,
      missing,
    );
  }

  /** The final status of a closed run (cached first, as a run's own end does); undefined while it runs. */
  private async closedView(taskId: string): Promise<TaskView | undefined> {
    const view = await closedRunView(this.client, this.connection, taskId, () =>
      this.cache.get(taskId).catch(() => undefined),
    );
    if (view) await this.cache.put(view, { recorded: true });
    return view;
  }
}

function terminalEvent(view: TaskView): AgentEventBody {
  if (view.status === 'completed') return { type: 'agent_completed' };
  return { type: 'agent_error', error: view.error ?? { type: 'agent_error', message: `the task ${view.status}` } };
}
