// Runs the slowest files first, so that with a few workers no long file starts last and runs
// alone at the end. Jest's own sequencer orders by the durations of the last run it cached, and
// by file size when it has none (a clean clone): there this falls back on the durations of a
// recorded run (durations.json: "<path>": seconds; `node test/setup/durations.js
// <jest --json report>` writes it). Files failed last time still come first, as in jest's.
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');
const recorded = require('./durations.json');

const ROOT = path.resolve(__dirname, '..', '..');

function key(test) {
  return path.relative(ROOT, test.path);
}

class SlowestFirst extends Sequencer {
  sort(tests) {
    const known = (test) => {
      const cached = this._getCache(test)[test.path];
      return { failed: cached?.[0] === 0, seconds: cached ? cached[1] / 1000 : (recorded[key(test)] ?? 0) };
    };
    const info = new Map(tests.map((t) => [t, known(t)]));
    return [...tests].sort((a, b) => {
      const x = info.get(a);
      const y = info.get(b);
      if (x.failed !== y.failed) return x.failed ? -1 : 1;
      return y.seconds - x.seconds;
    });
  }
}

module.exports = SlowestFirst;
