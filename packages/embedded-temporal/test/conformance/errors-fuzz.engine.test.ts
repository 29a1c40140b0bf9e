// Out-of-order calls get the gRPC status the real frontend answers with, and a bounded, seeded
// fuzz run (garbage bytes, mangled task tokens, protocol calls out of order, absurd page sizes and
// durations) never gets INTERNAL and never stops the server from running a normal workflow. Each
// plain mistake's status: errors.engine.test.ts.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { createEnv, Env, longPoll, uid } from './harness';
import { echo, handDriven } from './workflows/errors-fuzz';
import * as activities from './activities/errors-fuzz';
import {
  S,
  CallOutcome,
  outcome,
  codeName,
  RawClient,
  prng,
  Rng,
  garbageBody,
  garbledToken,
  randomQuery,
  WORKFLOW_SERVICE,
  GARBAGE_TARGETS,
  POLL_TARGETS,
} from './fuzz-tools';
import { expectStatus, json, rawCalls, secs } from './errors-helpers';

const CT = temporal.api.enums.v1.CommandType;
const NORMAL = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL;

let env: Env;
let raw: RawClient;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/errors-fuzz'), activities });
  raw = new RawClient(env.address);
});
afterAll(async () => {
  raw?.close();
  await env?.teardown();
});

const { ws, ns, start } = rawCalls(() => env);

describe('bad input gets the status the real server gives', () => {
  test('protocol calls out of order: a task answered twice, an activity answered after its timeout', async () => {
    const taskQueue = `tq-by-hand-${randomUUID()}`;
    const tokens = await driveByHand(taskQueue, 'answer-twice');
    const late = await driveByHand(taskQueue, 'answer-late');
    const all = [...tokens, ...late];
    // Every token now names a finished task: each answer is NOT_FOUND, never INTERNAL.
    for (const taskToken of all) {
      expectStatus(
        await outcome(
          ws().respondActivityTaskFailed({
            namespace: ns(),
            taskToken,
            failure: { message: 'x', applicationFailureInfo: {} },
          }),
        ),
        S.NOT_FOUND,
      );
      // A failure that is not an application failure is refused before the token is looked up.
      expectStatus(
        await outcome(ws().respondActivityTaskFailed({ namespace: ns(), taskToken, failure: { message: 'x' } })),
        S.INVALID_ARGUMENT,
        /ApplicationFailureInfo/,
      );
      expectStatus(
        await outcome(ws().respondWorkflowTaskCompleted({ namespace: ns(), taskToken, commands: [] })),
        S.NOT_FOUND,
      );
    }
    fuzzTokens.push(...all);
  });
});

const fuzzTokens: Buffer[] = [];

async function pollTask(taskQueue: string) {
  const task = await longPoll(env, () =>
    ws().pollWorkflowTaskQueue({ namespace: ns(), taskQueue: { name: taskQueue, kind: NORMAL }, identity: 'by-hand' }),
  );
  expect(task.taskToken?.length).toBeGreaterThan(0);
  return Buffer.from(task.taskToken!);
}

/** Plays the worker for handDriven(): its commands match the workflow code, so it replays. */
async function driveByHand(taskQueue: string, mode: 'answer-twice' | 'answer-late'): Promise<Buffer[]> {
  const h = await env.client.workflow.start(handDriven, { taskQueue, workflowId: uid(mode) });
  const first = await pollTask(taskQueue);
  const schedule = {
    commandType: CT.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
    scheduleActivityTaskCommandAttributes: {
      activityId: '1',
      activityType: { name: 'handActivity' },
      taskQueue: { name: taskQueue },
      startToCloseTimeout: secs(1),
      retryPolicy: { maximumAttempts: 1 },
    },
  };
  await ws().respondWorkflowTaskCompleted({
    namespace: ns(),
    taskToken: first,
    commands: [schedule],
    identity: 'by-hand',
  });
  expectStatus(
    await outcome(ws().respondWorkflowTaskCompleted({ namespace: ns(), taskToken: first, commands: [schedule] })),
    S.NOT_FOUND,
  );
  expectStatus(await outcome(ws().respondWorkflowTaskFailed({ namespace: ns(), taskToken: first })), S.NOT_FOUND);

  const act = await longPoll(env, () =>
    ws().pollActivityTaskQueue({ namespace: ns(), taskQueue: { name: taskQueue, kind: NORMAL }, identity: 'by-hand' }),
  );
  const actToken = Buffer.from(act.taskToken!);
  if (mode === 'answer-twice') {
    await ws().respondActivityTaskCompleted({
      namespace: ns(),
      taskToken: actToken,
      result: { payloads: [json('by hand')] },
    });
    expectStatus(
      await outcome(ws().respondActivityTaskCompleted({ namespace: ns(), taskToken: actToken })),
      S.NOT_FOUND,
    );
    expectStatus(
      await outcome(ws().recordActivityTaskHeartbeat({ namespace: ns(), taskToken: actToken })),
      S.NOT_FOUND,
    );
  }
  // In the late case this poll returns once the start-to-close timeout has fired.
  const second = await pollTask(taskQueue);
  if (mode === 'answer-late') {
    expectStatus(
      await outcome(ws().respondActivityTaskCompleted({ namespace: ns(), taskToken: actToken })),
      S.NOT_FOUND,
    );
    expectStatus(
      await outcome(ws().respondActivityTaskCanceled({ namespace: ns(), taskToken: actToken })),
      S.NOT_FOUND,
    );
  }
  const complete = {
    commandType: CT.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
    completeWorkflowExecutionCommandAttributes: { result: { payloads: [json('done')] } },
  };
  await ws().respondWorkflowTaskCompleted({
    namespace: ns(),
    taskToken: second,
    commands: [complete],
    identity: 'by-hand',
  });
  expectStatus(
    await outcome(ws().respondWorkflowTaskCompleted({ namespace: ns(), taskToken: second, commands: [complete] })),
    S.NOT_FOUND,
  );
  expect(await h.result()).toBe('done');
  await env.replay(h);
  return [first, actToken, second];
}

// ---- fuzz -------------------------------------------------------------------

/** Codes a client mistake may get. INTERNAL and UNKNOWN are never among them. */
const CLIENT_CODES = new Set([
  S.OK,
  S.INVALID_ARGUMENT,
  S.NOT_FOUND,
  S.ALREADY_EXISTS,
  S.FAILED_PRECONDITION,
  S.DEADLINE_EXCEEDED,
  S.UNIMPLEMENTED,
  S.PERMISSION_DENIED,
]);

interface Attempt {
  what: string;
  run(): Promise<CallOutcome>;
  allowed: Set<number>;
}

const only = (...codes: number[]) => new Set(codes);

function fuzzCall(rng: Rng, completed: WorkflowHandle[]): Attempt {
  const tq = { name: `tq-fuzz-${rng.int(5)}`, kind: NORMAL };
  switch (rng.int(9)) {
    case 0: {
      const method = rng.chance(0.85) ? rng.pick(GARBAGE_TARGETS) : rng.pick(POLL_TARGETS);
      const body = method.startsWith('Poll')
        ? garbageBody(rng, `nope-${rng.int(1e6)}`).subarray(0, 40)
        : garbageBody(rng, ns());
      return {
        what: `garbage bytes to ${method}`,
        run: () => raw.call(`/${WORKFLOW_SERVICE}/${method}`, body),
        allowed: CLIENT_CODES,
      };
    }
    case 1: {
      const taskToken = garbledToken(rng, fuzzTokens);
      const method = rng.pick([
        'respondWorkflowTaskCompleted',
        'respondWorkflowTaskFailed',
        'respondActivityTaskCompleted',
        'respondActivityTaskFailed',
        'respondActivityTaskCanceled',
        'recordActivityTaskHeartbeat',
        'respondQueryTaskCompleted',
      ] as const);
      return {
        what: `garbled token to ${method}`,
        run: () => outcome((ws()[method] as any)({ namespace: rng.chance(0.8) ? ns() : '', taskToken })),
        allowed: only(S.INVALID_ARGUMENT, S.NOT_FOUND),
      };
    }
    case 2: {
      const namespace = `nope-${rng.int(1e9)}`;
      const call = rng.pick([
        () => ws().pollWorkflowTaskQueue({ namespace, taskQueue: tq }),
        () => ws().pollActivityTaskQueue({ namespace, taskQueue: tq }),
        () => ws().describeNamespace({ namespace }),
        () => ws().countWorkflowExecutions({ namespace }),
        () => ws().signalWorkflowExecution({ namespace, workflowExecution: { workflowId: 'x' }, signalName: 's' }),
      ]);
      return {
        what: 'call in a namespace that does not exist',
        run: () => outcome(call()),
        allowed: only(S.NOT_FOUND),
      };
    }
    case 3: {
      const pageSize = rng.pick([0, -1, -2147483648, 2147483647, 1, 1001, 100000]);
      const query = rng.chance(0.5) ? `TaskQueue = 'tq-fuzz-none' AND ${randomQuery(rng)}` : randomQuery(rng);
      const list = rng.chance(0.7);
      return {
        what: `${list ? 'list' : 'count'} pageSize=${pageSize} query=${query}`,
        run: () =>
          outcome(
            list
              ? ws().listWorkflowExecutions({ namespace: ns(), pageSize, query })
              : ws().countWorkflowExecutions({ namespace: ns(), query }),
          ),
        allowed: only(S.OK, S.INVALID_ARGUMENT),
      };
    }
    case 4: {
      const neg = { seconds: Long.fromNumber(-1 - rng.int(1e6)) };
      const field = rng.pick([
        'workflowRunTimeout',
        'workflowExecutionTimeout',
        'workflowTaskTimeout',
        'workflowStartDelay',
      ]);
      return {
        what: `start with negative ${field}`,
        run: () => outcome(start({ [field]: neg, taskQueue: tq })),
        allowed: only(S.INVALID_ARGUMENT),
      };
    }
    case 5: {
      const h = rng.pick(completed);
      const exec = { workflowId: h.workflowId };
      // Cancelling a finished run is a successful no-op on the real server; the rest are NOT_FOUND.
      const [name, call, code] = rng.pick([
        [
          'signal',
          () => ws().signalWorkflowExecution({ namespace: ns(), workflowExecution: exec, signalName: 'done' }),
          S.NOT_FOUND,
        ],
        ['terminate', () => ws().terminateWorkflowExecution({ namespace: ns(), workflowExecution: exec }), S.NOT_FOUND],
        ['cancel', () => ws().requestCancelWorkflowExecution({ namespace: ns(), workflowExecution: exec }), S.OK],
        [
          'update',
          () =>
            ws().updateWorkflowExecution({
              namespace: ns(),
              workflowExecution: exec,
              request: { meta: { updateId: randomUUID() }, input: { name: 'bump' } },
            }),
          S.NOT_FOUND,
        ],
      ] as const);
      return { what: `${name} a completed workflow`, run: () => outcome(call()), allowed: only(code) };
    }
    case 6: {
      const runId = rng.chance(0.5) ? randomUUID() : rng.bytes(8).toString('hex');
      const exec = { workflowId: rng.chance(0.5) ? rng.pick(completed).workflowId : `wf-${rng.int(1e6)}`, runId };
      return {
        what: `describe run ${runId}`,
        run: () => outcome(ws().describeWorkflowExecution({ namespace: ns(), execution: exec })),
        allowed: only(S.NOT_FOUND, S.INVALID_ARGUMENT),
      };
    }
    case 7: {
      const exec = { workflowId: rng.pick(completed).workflowId };
      const maximumPageSize = rng.pick([-1, 0, 1, 2147483647]);
      const nextPageToken = rng.chance(0.5) ? rng.bytes(rng.int(20)) : undefined;
      return {
        what: `history page size ${maximumPageSize}`,
        run: () =>
          outcome(
            ws().getWorkflowExecutionHistory({ namespace: ns(), execution: exec, maximumPageSize, nextPageToken }),
          ),
        // A random token may even decode on a real server, then name a branch that is not there.
        allowed: only(S.OK, S.INVALID_ARGUMENT, S.NOT_FOUND),
      };
    }
    default: {
      const policy = rng.pick([
        { backoffCoefficient: 0.01 + rng.next() * 0.98 },
        { maximumAttempts: -1 - rng.int(9) },
        { initialInterval: secs(-1 - rng.int(9)) },
      ]);
      return {
        what: `start with retry policy ${JSON.stringify(policy)}`,
        run: () => outcome(start({ retryPolicy: policy, taskQueue: tq })),
        allowed: only(S.INVALID_ARGUMENT),
      };
    }
  }
}

test('seeded fuzz: hundreds of malformed calls, no INTERNAL, and a normal workflow completes after every batch', async () => {
  const rng = prng(20240607);
  const live: WorkflowHandle[] = [];
  const surprises: string[] = [];
  // No bound on the time: a call that hung would keep the test past jest's timeout (a raw one
  // ends at its 2 s deadline, and DEADLINE_EXCEEDED is a surprise wherever it is not allowed).
  await env.withWorker(async () => {
    const runEcho = async (i: number) => {
      const h = await env.client.workflow.start(echo, {
        args: [`batch-${i}`],
        taskQueue: env.taskQueue,
        workflowId: uid('live'),
      });
      expect(await h.result()).toBe(`batch-${i}`);
      live.push(h);
    };
    await runEcho(0);
    for (let batch = 1; batch <= 6; batch++) {
      const attempts = Array.from({ length: 50 }, () => fuzzCall(rng, live));
      // Ten at a time: concurrency is part of the abuse.
      for (let i = 0; i < attempts.length; i += 10) {
        const results = await Promise.all(attempts.slice(i, i + 10).map(async (a) => ({ a, o: await a.run() })));
        for (const { a, o } of results) {
          // grpc-go answers undecodable bytes with INTERNAL before Temporal sees them; we say INVALID_ARGUMENT.
          const transportReject = o.code === S.INTERNAL && /unmarshal/i.test(o.details) && a.what.startsWith('garbage');
          if (!a.allowed.has(o.code) && !transportReject)
            surprises.push(`${a.what} -> ${codeName(o.code)}: ${o.details}`);
        }
      }
      await runEcho(batch);
    }
  });
  expect(surprises).toEqual([]);
  for (const h of live) await env.replay(h);
});
