// The bench's own full collection: it really collects (an unreachable object is gone after it).
import { collectOwnGarbage } from '../../bench/measure';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('collectOwnGarbage', () => {
  it('collects what nothing references any more, and can be called again', async () => {
    let target: object | undefined = { big: new Array(1000).fill('x') };
    const ref = new WeakRef(target);
    target = undefined;
    // A WeakRef's target stays alive until the job that created it has ended.
    await turn();
    collectOwnGarbage();
    await turn();
    collectOwnGarbage();
    expect(ref.deref()).toBeUndefined();
  });
});
