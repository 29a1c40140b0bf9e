// The DAG phase: how long a declarative workflow's step waits to start once
// its last dependency has finished. Each run is the 20-step DAG of
// test/e2e/workflows.e2e.test.ts (fan-out, diamond, fan-in; one model turn a
// step). Per step with dependencies:
//   sample = the step's first model request (received().at, this process)
//          - the latest close among its dependencies' step workflows (describe: the engine's record).
// After each run, a floor run (bench/floor.ts): a bare chain of as many child
// workflows as the DAG has dependent steps, timed the same way (child closed,
// describe -> the next child's first activity started); the row is judged
// against it: p99 <= FLOOR_RATIO x the floor's.
import { Client, Connection } from '@temporalio/client';
import { DAG_FLOOR_LABEL } from './floor';
import type { Bench } from './main';
import { completedTaskId, request, summarize, target } from './measure';
import { judgeAgainstFloor, Row } from './report';

export const DAG_LABEL = "DAG step scheduling: last dependency closed -> the step's first model request";

const STEPS: [string, string[]][] = [
  ['r1', []],
  ['r2', []],
  ['r3', []],
  ['a1', ['r1']],
  ['a2', ['r1']],
  ['a3', ['r1']],
  ['a4', ['r1']],
  ['b1', ['r2']],
  ['b2', ['b1']],
  ['b3', ['b1']],
  ['b4', ['b2', 'b3']],
  ['c1', ['a1', 'a2', 'a3', 'a4', 'b4', 'r3']],
  ['d1', ['c1']],
  ['d2', ['c1']],
  ['d3', ['c1']],
  ['d4', ['c1']],
  ['d5', ['c1']],
  ['e1', ['d1', 'd2', 'd3', 'd4', 'd5']],
  ['f1', ['r3']],
  ['f2', ['f1']],
];
/** Steps with dependencies: samples a run gives, and the floor chain's links after its first. */
const DEPENDENT = STEPS.filter(([, deps]) => deps.length).length;

interface DagRun {
  samples: number[];
  /** Dependent steps that had no model request. */
  missing: number;
}

/** The first model request of each step of the run tagged `tag`, by step name. */
function firstRequests(b: Bench, tag: string): Map<string, number> {
  const first = new Map<string, number>();
  for (const q of b.model.received()) {
    const prompt = String(
      (q.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')?.content ?? '',
    );
    const name = /^The step: (\S+)\./m.exec(prompt.split('\n')[1] ?? '')?.[1];
    if (name?.startsWith(`${tag}-`) && !first.has(name)) first.set(name, q.at);
  }
  return first;
}

/** One DAG through the service; undefined when the task did not complete. */
async function dagRun(b: Bench, temporal: Client, tag: string): Promise<DagRun | undefined> {
  const steps = STEPS.map(([id, deps]) => ({ id, name: `${tag}-${id}`, description: `do ${id}`, depends_on: deps }));
  const api = target(b.gatewayUrl, b.apiKey, 1);
  const r = await request(
    api,
    'POST',
    '/',
    { message: `plan ${tag}`, workflows: [{ id: 'w', name: tag, description: 'bench', steps }] },
    { timeoutMs: 120_000 },
  ).catch((err: Error) => ({ status: 0, body: err.message }));
  api.agent.destroy();
  const taskId = completedTaskId(r);
  if (!taskId) return undefined;
  const first = firstRequests(b, tag);
  const closed = new Map<string, number>();
  await Promise.all(
    steps.map(async (s) =>
      closed.set(s.id, (await temporal.workflow.getHandle(`${taskId}:w:${s.id}`).describe()).closeTime!.getTime()),
    ),
  );
  const out: DagRun = { samples: [], missing: 0 };
  for (const s of steps.filter((x) => x.depends_on.length)) {
    const at = first.get(s.name);
    if (at === undefined) out.missing++;
    else out.samples.push(at - Math.max(...s.depends_on.map((d) => closed.get(d)!)));
  }
  return out;
}

export async function dagPhase(b: Bench): Promise<Row[]> {
  const connection = await Connection.connect({ address: b.stack.temporalAddress });
  const temporal = new Client({ connection });
  const floorWorker = await b.floor();
  const samples: number[] = [];
  const floor: number[] = [];
  let errors = 0;
  try {
    // Run 0 is an unmeasured warm-up of both.
    for (let i = 0; i <= b.opts.dagRuns && b.left() > 0; i++) {
      await b.quiet();
      const run = await dagRun(b, temporal, `dagbench${i}`);
      if (!run) errors++;
      else if (i > 0) {
        samples.push(...run.samples);
        errors += run.missing;
      }
      await b.quiet();
      const f = await floorWorker
        .chain(`dag${i}`, DEPENDENT + 1)
        .catch((err: Error) => void b.log(`dag floor ${i}: ${err.message}`));
      if (i > 0) floor.push(...(f ?? []));
    }
  } finally {
    await connection.close();
  }
  b.log(
    `dag: ${samples.length} steps measured over ${b.opts.dagRuns} runs of ${STEPS.length} steps, ${errors} errors; floor: ${floor.length} links`,
  );
  const floorRow: Row = { label: DAG_FLOOR_LABEL, concurrency: '1 chain', s: summarize(floor), errors: 0 };
  return [
    judgeAgainstFloor({ label: DAG_LABEL, concurrency: '1 DAG', s: summarize(samples), errors }, floorRow),
    floorRow,
  ];
}
