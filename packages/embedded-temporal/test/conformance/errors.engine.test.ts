// Bad input: each mistake gets the gRPC status the real frontend answers with. Calls out of
// order and the seeded fuzz run: errors-fuzz.engine.test.ts.
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, longPoll, uid } from './harness';
import { waitForDone, doneSignal } from './workflows/errors-fuzz';
import * as activities from './activities/errors-fuzz';
import { S, outcome, codeName } from './fuzz-tools';
import { expectStatus, json, rawCalls, secs } from './errors-helpers';

const NORMAL = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL;
const WORKER_FAILURE =
  temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/errors-fuzz'), activities });
});
afterAll(async () => {
  await env?.teardown();
});

const { ws, ns, start } = rawCalls(() => env);

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
});
