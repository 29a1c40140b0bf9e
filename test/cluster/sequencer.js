// The cluster pass's order: the rollout file last (it retires the first build's workers, which
// the other files kill, drain and start again by name); the others by name.
const Sequencer = require('@jest/test-sequencer').default;

const LAST = 'rollout.cluster.test.ts';

class ClusterSequencer extends Sequencer {
  sort(tests) {
    const rank = (t) => (t.path.endsWith(LAST) ? 1 : 0);
    return [...tests].sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
  }
}

module.exports = ClusterSequencer;
