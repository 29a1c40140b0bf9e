// Workflows for the update-with-start and eager-start tests: a counter whose
// updates add to it (one validated, one that waits for a signal before it
// answers), and a plain greeting.
import { condition, defineQuery, defineSignal, defineUpdate, setHandler, sleep } from '@temporalio/workflow';

export const add = defineUpdate<number, [number]>('add');
/** Completes only once `release` is signalled: accepted long before completed. */
export const addLater = defineUpdate<number, [number]>('addLater');
export const release = defineSignal('release');
export const finish = defineSignal('finish');
export const total = defineQuery<number>('total');

export async function counter(start: number): Promise<number> {
  let value = start;
  let released = false;
  let finished = false;
  setHandler(total, () => value);
  setHandler(release, () => void (released = true));
  setHandler(finish, () => void (finished = true));
  setHandler(add, (n) => (value += n), {
    validator: (n) => {
      if (n < 0) throw new Error('negative');
    },
  });
  setHandler(addLater, async (n) => {
    await condition(() => released);
    return (value += n);
  });
  await condition(() => finished);
  return value;
}

export async function greet(name: string): Promise<string> {
  return `hello ${name}`;
}

/** Sleeps so a run stays open across a test step. */
export async function napper(ms: number): Promise<string> {
  await sleep(ms);
  return 'rested';
}
