// Task queues: when a task reaches a waiting poller, and what a stale task does.
import { TaskQueues } from '../../src/engine/matching';

type Task = { id: string; stale?: boolean };

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function queues(dispatched: string[] = []) {
  return new TaskQueues<Task, string>((task, identity) => {
    if (task.stale) return undefined;
    dispatched.push(`${task.id}@${identity}`);
    return task.id;
  });
}

describe('TaskQueues', () => {
  const never = new Promise<void>(() => undefined);

  it('hands a task to a waiting poller on the next turn, after the adding call has finished', async () => {
    const dispatched: string[] = [];
    const q = queues(dispatched);
    let got: string | undefined;
    void q.poll('ns', 'workflow', 'tq', 'w1', 10_000, never).then((r) => (got = r));
    q.add('ns', 'workflow', 'tq', { id: 'a' });
    // The caller's own answer is still being built here: nothing dispatched yet.
    expect(dispatched).toEqual([]);
    await Promise.resolve();
    expect(got).toBeUndefined();
    await nextTurn();
    expect(got).toBe('a');
    expect(dispatched).toEqual(['a@w1']);
  });

  it('hands several tasks added in one turn to several waiting pollers, in order', async () => {
    const q = queues();
    const polls = [
      q.poll('ns', 'activity', 'tq', 'w', 10_000, never),
      q.poll('ns', 'activity', 'tq', 'w', 10_000, never),
    ];
    q.add('ns', 'activity', 'tq', { id: 'a' });
    q.add('ns', 'activity', 'tq', { id: 'b' });
    q.add('ns', 'activity', 'tq', { id: 'c' });
    expect(await Promise.all(polls)).toEqual(['a', 'b']);
    expect(q.backlog('ns', 'activity', 'tq')).toBe(1);
    expect(await q.poll('ns', 'activity', 'tq', 'w', 10_000, never)).toBe('c');
  });

  it('drops a task that went stale before the hand-over, and the poller waits for the next one', async () => {
    const q = queues();
    const poll = q.poll('ns', 'workflow', 'tq', 'w', 10_000, never);
    q.add('ns', 'workflow', 'tq', { id: 'old', stale: true });
    await nextTurn();
    expect(q.backlog('ns', 'workflow', 'tq')).toBe(0);
    expect(q.hasPollers('ns', 'workflow', 'tq')).toBe(true);
    q.add('ns', 'workflow', 'tq', { id: 'new' });
    expect(await poll).toBe('new');
  });

  it('gives a task queued for the hand-over to a poll that arrives before it; the waiting poller waits on', async () => {
    const q = queues();
    let waiting: string | undefined = 'pending';
    void q.poll('ns', 'workflow', 'tq', 'w1', 10_000, never).then((r) => (waiting = r));
    q.add('ns', 'workflow', 'tq', { id: 'a' });
    expect(await q.poll('ns', 'workflow', 'tq', 'w2', 10_000, never)).toBe('a');
    await nextTurn();
    expect(waiting).toBe('pending');
    q.add('ns', 'workflow', 'tq', { id: 'b' });
    await nextTurn();
    expect(waiting).toBe('b');
  });

  it('answers an expired poll with nothing', async () => {
    const q = queues();
    expect(await q.poll('ns', 'workflow', 'tq', 'w', 20, never)).toBeUndefined();
    expect(q.hasPollers('ns', 'workflow', 'tq')).toBe(false);
  });

  it('ends the waiting polls of a worker that says ShutdownWorker, and gives its later polls nothing', async () => {
    const q = queues();
    let other: string | undefined = 'pending';
    const leaving = q.poll('ns', 'workflow', 'tq', 'w1', 10_000, never, 'key-1');
    void q.poll('ns', 'workflow', 'tq', 'w2', 10_000, never, 'key-2').then((r) => (other = r));
    q.shutdownWorker('key-1');
    expect(await leaving).toBeUndefined();
    q.add('ns', 'workflow', 'tq', { id: 'a' });
    // A poll the leaving worker sends after its ShutdownWorker: no task for it.
    expect(await q.poll('ns', 'workflow', 'tq', 'w1', 10_000, never, 'key-1')).toBeUndefined();
    await nextTurn();
    expect(other).toBe('a');
  });
});
