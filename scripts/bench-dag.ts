// The bench's DAG phase: how long a declarative workflow's step waits to
// start once its last dependency has finished. Each run is the 20-step DAG of
// test/e2e/workflows.e2e.test.ts (fan-out, diamond, fan-in). Per step with
// dependencies:
//   overhead = the step's first model request (received().at, whole ms, this process)
//            - the latest close time among its dependencies' step workflows (Temporal's record).
// The engine runs on this machine, so both clocks are this machine's.
import { Client, Connection } from '@temporalio/client';
import type { ScriptedModel } from '../src/scripted-model';
import { request, target } from './bench-http';
import { Row } from './bench-report';
import { summarize } from './bench-stats';

export const DAG_LABEL = 'DAG step scheduling: last dependency closed -> the step\'s first model request';
export const DAG_TARGET_P99_MS = 25;

const STEPS: [string, string[]][] = [
  ['r1', []], ['r2', []], ['r3', []],
  ['a1', ['r1']], ['a2', ['r1']], ['a3', ['r1']], ['a4', ['r1']],
  ['b1', ['r2']], ['b2', ['b1']], ['b3', ['b1']], ['b4', ['b2', 'b3']],
  ['c1', ['a1', 'a2', 'a3', 'a4', 'b4', 'r3']],
  ['d1', ['c1']], ['d2', ['c1']], ['d3', ['c1']], ['d4', ['c1']], ['d5', ['c1']],
  ['e1', ['d1', 'd2', 'd3', 'd4', 'd5']],
  ['f1', ['r3']], ['f2', ['f1']],
];

export interface DagPhaseInput {
  gatewayUrl: string;
  apiKey: string;
  temporalAddress: string;
  model: ScriptedModel;
  runs: number;
  quiet: () => Promise<unknown>;
  left: () => number;
  log: (line: string) => void;
}

export async function runDagPhase(inp: DagPhaseInput): Promise<Row[]> {
  const api = target(inp.gatewayUrl, inp.apiKey, 1);
  const connection = await Connection.connect({ address: inp.temporalAddress });
  const temporal = new Client({ connection });
  const samples: number[] = [];
  let errors = 0;
  try {
    // Run 0 is an unmeasured warm-up.
    for (let i = 0; i <= inp.runs && inp.left() > 0; i++) {
      await inp.quiet();
      const tag = `dagbench${i}`;
      const steps = STEPS.map(([id, deps]) => ({ id, name: `${tag}-${id}`, description: `do ${id}`, depends_on: deps }));
      const r = await request(api, 'POST', '/', { message: `plan ${tag}`, workflows: [{ id: 'w', name: tag, description: 'bench', steps }] }, { timeoutMs: 120_000 }).catch((err: Error) => ({ status: 0, body: err.message }));
      const taskId = /"task_id":"(task_[A-Za-z0-9]+)"/.exec(r.body)?.[1];
      if (r.status !== 200 || !/"status":"completed"/.test(r.body) || !taskId) {
        errors++;
        continue;
      }
      if (i === 0) continue;
      const firstRequest = new Map<string, number>();
      for (const q of inp.model.received()) {
        const prompt = String((q.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')?.content ?? '');
        const name = /^The step: (\S+)\./m.exec(prompt.split('\n')[1] ?? '')?.[1];
        if (name?.startsWith(`${tag}-`) && !firstRequest.has(name)) firstRequest.set(name, q.at);
      }
      const closed = new Map<string, number>();
      await Promise.all(steps.map(async (s) => closed.set(s.id, (await temporal.workflow.getHandle(`${taskId}:w:${s.id}`).describe()).closeTime!.getTime())));
      for (const s of steps) {
        if (!s.depends_on.length) continue;
        const at = firstRequest.get(s.name);
        if (at === undefined) {
          errors++;
          continue;
        }
        samples.push(at - Math.max(...s.depends_on.map((d) => closed.get(d)!)));
      }
    }
  } finally {
    await connection.close();
  }
  inp.log(`dag: ${samples.length} steps measured over ${inp.runs} runs of ${STEPS.length} steps, ${errors} errors`);
  return [{ label: DAG_LABEL, concurrency: '1 DAG', s: summarize(samples), errors, targetP99: DAG_TARGET_P99_MS }];
}
