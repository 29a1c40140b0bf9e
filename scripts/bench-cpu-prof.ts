// Preloaded into the stack's Node processes by `npm run bench -- --profile DIR`
// (through NODE_OPTIONS=--require, since Node refuses --cpu-prof there): starts
// the V8 sampling profiler in-process and writes a .cpuprofile when the
// process exits. Does nothing unless BENCH_CPU_PROF_DIR is set.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import { threadId } from 'node:worker_threads';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // The in-process inspector answers synchronously, so this completes
    // inside an 'exit' handler, where nothing asynchronous would run.
    session.post('Profiler.stop', (err, res) => {
      if (err || !res) return;
      const name = (process.argv[1] ?? 'node').split(path.sep).slice(-2).join('_').replace(/[^A-Za-z0-9_-]/g, '_');
      fs.writeFileSync(path.join(dir, `CPU.${name}.${process.pid}.${threadId}.cpuprofile`), JSON.stringify(res.profile));
    });
  };
  process.on('exit', write);
}
