// Bad input and out-of-order calls: each gets the gRPC status the real frontend
// answers with, and a bounded, seeded fuzz run (garbage bytes, mangled task tokens,
// protocol calls out of order, absurd page sizes and durations) never gets INTERNAL
// and never stops the server from running a normal workflow.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { createEnv, Env, longPoll, uid } from './harness';
import { echo, waitForDone, handDriven, doneSignal } from './workflows/errors-fuzz';
import * as activities from './activities/errors-fuzz';
import {
  S,
  CallOutcome,
  outcome,
  codeName,
  detailType,
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

const CT = temporal.api.enums.v1.CommandType;
const NORMAL = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL;
const WORKER_FAILURE =
  temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE;

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

const ws = () => env.connection.workflowService;
const ns = () => env.namespace;
const json = (v: unknown) => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(v)),
});
const secs = (n: number) => ({ seconds: Long.fromNumber(n) });

function expectStatus(o: CallOutcome, code: number, message?: RegExp, detail?: string): void {
  expect(`${codeName(o.code)}: ${o.details}`).toMatch(new RegExp(`^${codeName(code)}: `));
  if (message) expect(o.details).toMatch(message);
  if (detail) expect(detailType(o)).toBe(detail);
}

/** A start request that is valid except for what `patch` breaks. */
function start(patch: Record<string, unknown>) {
  return ws().startWorkflowExecution({
    namespace: ns(),
    workflowId: uid('bad-start'),
    workflowType: { name: 'echo' },
    taskQueue: { name: `tq-never-polled-${randomUUID()}` },
    requestId: randomUUID(),
    ...patch,
  } as any);
}

describe('bad input gets the status the real server gives', () => {
  test('NOT_FOUND: unknown namespace, workflow or run', async () => {
    const nope = `nope-${randomUUID()}`;
    const missing = { workflowId: uid('missing') };
    expectStatus(await outcome(start({ namespace: nope })), S.NOT_FOUND, new RegExp(nope), 'NamespaceNotFoundFailure');
    expectStatus(
      await outcome(ws().describeNamespace({ namespace: nope })),
      S.NOT_FOUND,
      undefined,
      'NamespaceNotFoundFailure',
    );
    expectStatus(
      await outcome(ws().pollWorkflowTaskQueue({ namespace: nope, taskQueue: { name: 'x', kind: NORMAL } })),
      S.NOT_FOUND,
    );
    expectStatus(await outcome(ws().listWorkflowExecutions({ namespace: nope })), S.NOT_FOUND);
    expectStatus(
      await outcome(ws().describeWorkflowExecution({ namespace: ns(), execution: missing })),
      S.NOT_FOUND,
      undefined,
      'NotFoundFailure',
    );
    expectStatus(
      await outcome(
        ws().describeWorkflowExecution({ namespace: ns(), execution: { ...missing, runId: randomUUID() } }),
      ),
      S.NOT_FOUND,
    );
    expectStatus(
      await outcome(ws().signalWorkflowExecution({ namespace: ns(), workflowExecution: missing, signalName: 's' })),
      S.NOT_FOUND,
    );
    expectStatus(
      await outcome(ws().terminateWorkflowExecution({ namespace: ns(), workflowExecution: missing })),
      S.NOT_FOUND,
    );
    expectStatus(
      await outcome(ws().requestCancelWorkflowExecution({ namespace: ns(), workflowExecution: missing })),
      S.NOT_FOUND,
    );
    expectStatus(
      await outcome(ws().queryWorkflow({ namespace: ns(), execution: missing, query: { queryType: 'q' } })),
      S.NOT_FOUND,
    );
    expectStatus(await outcome(ws().getWorkflowExecutionHistory({ namespace: ns(), execution: missing })), S.NOT_FOUND);
    const update = {
      namespace: ns(),
      workflowExecution: missing,
      request: { meta: { updateId: 'u' }, input: { name: 'bump' } },
    };
    expectStatus(await outcome(ws().updateWorkflowExecution(update)), S.NOT_FOUND);
    const byId = { namespace: ns(), workflowId: missing.workflowId, activityId: '1' };
    expectStatus(await outcome(ws().respondActivityTaskCompletedById(byId)), S.NOT_FOUND);
  });

  test('INVALID_ARGUMENT: missing fields, bad policies, bad cron, unknown search attribute, malformed ids and tokens', async () => {
    const cases: [string, Promise<unknown>, RegExp?][] = [
      [
        'long poll without a deadline',
        ws().pollActivityTaskQueue({ namespace: ns(), taskQueue: { name: `tq-${randomUUID()}`, kind: NORMAL } }),
        /Context timeout is not set/,
      ],
      ['no workflow id', start({ workflowId: '' }), /WorkflowId/],
      ['no workflow type', start({ workflowType: undefined }), /WorkflowType/i],
      ['no task queue', start({ taskQueue: undefined }), /task ?queue/i],
      ['backoff < 1', start({ retryPolicy: { backoffCoefficient: 0.5 } }), /BackoffCoefficient/],
      [
        'max interval < initial',
        start({ retryPolicy: { initialInterval: secs(10), maximumInterval: secs(1) } }),
        /MaximumInterval/,
      ],
      ['negative attempts', start({ retryPolicy: { maximumAttempts: -1 } }), /MaximumAttempts/],
      ['bad cron', start({ cronSchedule: 'every tuesday' }), /CronSchedule/i],
      ['cron with start delay', start({ cronSchedule: '* * * * *', workflowStartDelay: secs(5) })],
      [
        'unknown search attribute',
        start({ searchAttributes: { indexedFields: { NoSuchAttribute: json('x') } } }),
        /NoSuchAttribute/,
      ],
      ['negative run timeout', start({ workflowRunTimeout: secs(-5) })],
      ['negative task timeout', start({ workflowTaskTimeout: secs(-1) })],
      ['no namespace', ws().describeWorkflowExecution({ namespace: '', execution: { workflowId: 'x' } }), /Namespace/],
      ['no execution', ws().describeWorkflowExecution({ namespace: ns() }), /Execution/],
      [
        'no workflow id to describe',
        ws().describeWorkflowExecution({ namespace: ns(), execution: { runId: randomUUID() } }),
        /WorkflowId/,
      ],
      [
        'run id not a uuid',
        ws().describeWorkflowExecution({ namespace: ns(), execution: { workflowId: 'x', runId: 'not-a-uuid' } }),
        /RunId/,
      ],
      [
        'signal without a name',
        ws().signalWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId: uid('x') } }),
        /SignalName/,
      ],
      [
        'query without a type',
        ws().queryWorkflow({ namespace: ns(), execution: { workflowId: uid('x') }, query: {} }),
        /QueryType/,
      ],
      ['empty task token', ws().respondWorkflowTaskCompleted({ namespace: ns() }), /token/i],
      [
        'garbage task token',
        ws().respondActivityTaskCompleted({ namespace: ns(), taskToken: Buffer.from([1, 2, 3, 250]) }),
        /token/i,
      ],
      [
        'garbage heartbeat token',
        ws().recordActivityTaskHeartbeat({ namespace: ns(), taskToken: Buffer.from('{"x":1') }),
        /token/i,
      ],
      [
        'bad list query',
        ws().listWorkflowExecutions({ namespace: ns(), query: "NoSuchAttribute = 'x'" }),
        /NoSuchAttribute/,
      ],
      [
        'bad count group by',
        ws().countWorkflowExecutions({ namespace: ns(), query: 'GROUP BY WorkflowType' }),
        /WorkflowType/,
      ],
      ['namespace without retention', ws().registerNamespace({ namespace: uid('ns-no-retention') }), /retention/i],
    ];
    for (const [name, p, message] of cases) {
      const o = await outcome(p);
      expect(`${name} -> ${codeName(o.code)}: ${o.details}`).toMatch(new RegExp(`^${name} -> INVALID_ARGUMENT: `));
      if (message) expect(`${name}: ${o.details}`).toMatch(message);
    }
    // A list page token that is not one: the real SQL store hands back its JSON decoding
    // error unwrapped (UNKNOWN); we say INVALID_ARGUMENT. Either way it is refused.
    const token = await outcome(
      ws().listWorkflowExecutions({ namespace: ns(), nextPageToken: Buffer.from('garbage') }),
    );
    expect([codeName(S.INVALID_ARGUMENT), codeName(S.UNKNOWN)]).toContain(codeName(token.code));
  });

  test('ALREADY_EXISTS: starting a running workflow id, registering an existing namespace', async () => {
    expectStatus(
      await outcome(ws().registerNamespace({ namespace: ns(), workflowExecutionRetentionPeriod: secs(86400) })),
      S.ALREADY_EXISTS,
      undefined,
      'NamespaceAlreadyExistsFailure',
    );
    await env.withWorker(async () => {
      const workflowId = uid('running');
      const h = await env.client.workflow.start(waitForDone, { taskQueue: env.taskQueue, workflowId });
      const again = await outcome(
        start({ workflowId, workflowType: { name: 'waitForDone' }, taskQueue: { name: env.taskQueue } }),
      );
      expectStatus(again, S.ALREADY_EXISTS, new RegExp(workflowId), 'WorkflowExecutionAlreadyStartedFailure');
      await h.signal(doneSignal);
      expect(await h.result()).toBe('total:0');
      await env.replay(h);
    });
  });

  test('FAILED_PRECONDITION: query or update while workflow tasks keep failing, query of a run closed before any task, too-short long poll', async () => {
    const taskQueue = `tq-failing-${randomUUID()}`;
    const h = await env.client.workflow.start(waitForDone, { taskQueue, workflowId: uid('failing') });
    // Play a worker whose tasks fail: from the third attempt the server answers fast.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const task = await longPoll(env, () =>
        ws().pollWorkflowTaskQueue({
          namespace: ns(),
          taskQueue: { name: taskQueue, kind: NORMAL },
          identity: 'failing-worker',
        }),
      );
      expect(task.attempt).toBe(attempt);
      if (attempt < 3)
        await ws().respondWorkflowTaskFailed({
          namespace: ns(),
          taskToken: task.taskToken,
          cause: WORKER_FAILURE,
          identity: 'failing-worker',
        });
    }
    const query = { namespace: ns(), execution: { workflowId: h.workflowId }, query: { queryType: 'state' } };
    expectStatus(
      await outcome(ws().queryWorkflow(query)),
      S.FAILED_PRECONDITION,
      /failed state/i,
      'WorkflowNotReadyFailure',
    );
    const update = {
      namespace: ns(),
      workflowExecution: { workflowId: h.workflowId },
      request: { meta: { updateId: 'u1' }, input: { name: 'bump' } },
    };
    expectStatus(await outcome(ws().updateWorkflowExecution(update)), S.FAILED_PRECONDITION, /failed state/i);
    await h.terminate('done testing');
    await env.replay(h);

    const never = await env.client.workflow.start(waitForDone, {
      taskQueue: `tq-never-${randomUUID()}`,
      workflowId: uid('never-ran'),
    });
    await never.terminate('closed before any workflow task');
    const q = await outcome(
      ws().queryWorkflow({
        namespace: ns(),
        execution: { workflowId: never.workflowId },
        query: { queryType: 'state' },
      }),
    );
    expectStatus(q, S.FAILED_PRECONDITION, /closed before/i);
    await env.replay(never);

    const short = await outcome(
      env.connection.withDeadline(Date.now() + 1000, () =>
        ws().pollActivityTaskQueue({ namespace: ns(), taskQueue: { name: taskQueue, kind: NORMAL } }),
      ),
    );
    expectStatus(short, S.FAILED_PRECONDITION, /timeout is too short/i);
  });

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
