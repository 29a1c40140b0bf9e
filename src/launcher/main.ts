// `npm start`: the whole service on one machine, with a banner saying what runs
// where. Ctrl-C stops everything; the next start resumes unfinished tasks.
import path from 'node:path';
import { startStack } from './stack';
import { ROOT } from './processes';

async function main(): Promise<void> {
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const dataDir = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
  say('starting the Agent Execution Service (single machine)...');
  const stack = await startStack({ dataDir, log: (s) => say(`  ${s}`), echoChildren: process.env.LOG_CHILDREN === 'true' });
  const line = '-'.repeat(72);
  say(line);
  say(`  Agent Execution Service ready: ${stack.gatewayUrl}`);
  say(`  Temporal: ${stack.temporalAddress}    Redis: ${stack.redisUrl}`);
  if (stack.modelUrl) say('  MODEL: built-in scripted model (no OPENAI_API_KEY set) — replies are canned, offline');
  if (stack.devKey) say(`  API key: ${stack.devKey} (account "dev"; set API_KEYS to use your own)`);
  say(`  try: curl -s ${stack.gatewayUrl}/ -H 'Authorization: Bearer ${stack.devKey ?? '<key>'}' -H 'Content-Type: application/json' -d '{"message":"hello"}'`);
  say(line);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    say('stopping...');
    await stack.stop();
    say('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  for (const [name, child] of Object.entries(stack.children)) {
    void child.exited.then((code) => {
      if (!stopping) {
        say(`${name} exited unexpectedly (code ${code}); stopping the rest`);
        process.stderr.write(child.output().slice(-4000));
        void stop();
      }
    });
  }
}

main().catch((err) => {
  process.stderr.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
