// Agentbase's official Python SDK (agentbase-sdk from PyPI, installed into
// .tools/ by scripts/install-agentbase-sdk.sh), unchanged, against the real
// stack: every method (run_agent, agent.run, messages.get, messages.clear, their
// raw and streamed variants), sync and async; each field of its run parameters;
// errors typed by status, and its retries obeying x-should-retry. Each call is
// a Python process (fixtures/agentbase-sdk-calls.py, forked from one that imported
// the SDK once) printing what it got as JSON. Agentbase's TypeScript SDK is not on the npm registry (docs/testing.md).
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { formOf, KEY_A, useStack, waitUntil } from './helpers';
import { startReceiver, type Receiver } from './callback-receiver';

jest.setTimeout(180_000);
// Heartbeats every 200 ms, so a run that waits on a tool has many of them mid-stream, after event ids.
const ctx = useStack({ OUTBOUND_ALLOWLIST: '127.0.0.1', SSE_HEARTBEAT_MS: '200' });
const ROOT = path.join(__dirname, '..', '..');
const CALLS = path.join(__dirname, 'fixtures', 'agentbase-sdk-calls.py');

let python: string;
let receiver: Receiver;
let shopId: string;

beforeAll(async () => {
  // The test set-up's installer (scripts/test.sh runs it too): idempotent, prints the environment's python.
  const installed = spawnSync('bash', [path.join(ROOT, 'scripts/install-agentbase-sdk.sh')], { encoding: 'utf8' });
  if (installed.status !== 0) throw new Error(`the Agentbase SDK could not be installed: ${installed.stderr.trim()}`);
  python = installed.stdout.trim().split('\n').pop()!;
  receiver = await startReceiver();
  const shop = await ctx.call('POST', '/datastores', {
    form: formOf({ name: 'shop' }, { data: fs.readFileSync(path.join(ROOT, 'examples/shop.db')), name: 'shop.db' }),
  });
  expect(shop.status).toBe(201);
  shopId = shop.json.id;
});
afterAll(async () => {
  await server?.close();
  if (server) fs.rmSync(server.dir, { recursive: true, force: true });
  await receiver?.close();
});

type Flavor = 'sync' | 'async';
interface Failure {
  class: string;
  api_error: boolean;
  status?: number;
  body?: any;
  should_retry?: string | null;
  retry_after?: string | null;
  retries?: string | null;
}
type Outcome = { ok: any; error?: undefined } | { ok?: undefined; error: Failure };

/**
 * The calls' Python parent (the fixture's `serve`): the SDK imported once, each call forked from it
 * into a process of its own. Started at the first call, when the stack's address is known.
 */
class CallServer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, { pid?: number; done(code: number): void }>();
  private next = 0;
  private exited = false;
  private log = '';

  constructor(readonly dir: string) {
    const env = {
      ...process.env,
      AGENTBASE_BASE_URL: ctx.stack().gatewayUrl,
      AGENTBASE_API_KEY: KEY_A,
      PYTHONDONTWRITEBYTECODE: '1',
    };
    this.child = spawn(python, [CALLS, 'serve'], { env });
    this.child.stderr.on('data', (d) => (this.log += d));
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as { id: number; pid?: number; code?: number };
      const call = this.waiting.get(msg.id);
      if (call && msg.pid !== undefined) call.pid = msg.pid;
      if (call && msg.code !== undefined) call.done(msg.code);
    });
    this.child.on('exit', () => {
      this.exited = true;
      for (const call of this.waiting.values()) call.done(-1);
    });
  }

  /** One call in its own forked process: its stdout, or an error with its stderr. */
  async call(argv: string[]): Promise<string> {
    if (this.exited) throw new Error(`the SDK's call server exited:\n${this.log}`);
    const id = this.next++;
    const [out, err] = ['out', 'err'].map((k) => path.join(this.dir, `${id}.${k}`));
    const code = await new Promise<number>((resolve) => {
      const call = { done: resolve } as { pid?: number; done(code: number): void };
      const timer = setTimeout(() => call.pid && process.kill(call.pid, 'SIGKILL'), 120_000);
      call.done = (c) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(c);
      };
      this.waiting.set(id, call);
      this.child.stdin.write(`${JSON.stringify({ id, argv, out, err })}\n`);
    });
    const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
    if (code !== 0) throw new Error(`${argv.slice(0, 2).join(' ')} exited ${code}\n${read(err)}${this.log}`);
    return read(out);
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exited;
  }
}

let server: CallServer | undefined;

/** One SDK call in its own Python process (async: the scripted model answers from this process). */
async function sdk(flavor: Flavor, call: string, args: object): Promise<Outcome> {
  server ??= new CallServer(fs.mkdtempSync(path.join(os.tmpdir(), 'agentbase-sdk-')));
  return JSON.parse(await server.call([flavor, call, JSON.stringify(args)])) as Outcome;
}

/** The events of a run that must succeed. */
async function run(flavor: Flavor, params: object, method: 'run_agent' | 'agent.run' = 'run_agent'): Promise<any[]> {
  const r = await sdk(flavor, 'run', { method, params });
  if (r.error) throw new Error(`run failed: ${JSON.stringify(r.error)}`);
  return r.ok;
}

/** The error of a call that must fail. */
async function failure(flavor: Flavor, call: string, args: object): Promise<Failure> {
  const r = await sdk(flavor, call, args);
  if (!r.error) throw new Error(`${call} succeeded: ${JSON.stringify(r.ok).slice(0, 300)}`);
  return r.error;
}

const types = (events: any[]) => events.map((e) => e.type);
const answer = (events: any[]) =>
  events
    .filter((e) => e.type === 'agent_response')
    .map((e) => e.content)
    .join('');

describe.each<Flavor>(['sync', 'async'])('the %s client', (flavor) => {
  test('run_agent and agent.run stream a run; the session goes on; messages.get reads it and messages.clear empties it', async () => {
    const first = await run(flavor, { message: 'hello' });
    expect(types(first)).toEqual([
      'agent_started',
      'agent_response_start',
      'agent_response',
      'agent_step',
      'agent_cost',
      'agent_completed',
    ]);
    expect(answer(first)).toBe('You said: hello');
    const { session, task_id } = first[0];
    for (const e of first) expect([e.session, e.task_id]).toEqual([session, task_id]);
    expect(first.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    const second = await run(flavor, { message: 'and again', session }, 'agent.run');
    expect(second[0].session).toBe(session);
    expect(second[0].task_id).not.toBe(task_id);
    expect(types(second).at(-1)).toBe('agent_completed');

    const conversation = [
      { type: 'user_message', content: 'hello' },
      { type: 'agent_response', content: 'You said: hello' },
      { type: 'user_message', content: 'and again' },
      { type: 'agent_response', content: 'You said: and again' },
    ];
    expect(await sdk(flavor, 'messages_get', { session })).toEqual({ ok: conversation });
    expect(await sdk(flavor, 'raw_messages_get', { session })).toEqual({
      ok: { status: 200, content_type: expect.stringMatching(/^application\/json/), parsed: conversation },
    });
    expect(await sdk(flavor, 'messages_clear', { session })).toEqual({
      ok: { success: true, message: expect.stringContaining(session) },
    });
    expect(await sdk(flavor, 'messages_get', { session })).toEqual({ ok: [] });
  });

  test("with_raw_response shows the run's headers; with_streaming_response its lines, heartbeats among them, which the parsed stream skips", async () => {
    const raw = await sdk(flavor, 'raw_run', { params: { message: 'headers please' } });
    expect(raw.ok).toMatchObject({
      status: 200,
      headers: { 'content-type': expect.stringMatching(/^text\/event-stream/) },
    });
    expect(raw.ok.headers['x-task-id']).toBe(raw.ok.events[0].task_id);
    expect(raw.ok.headers['x-session-id']).toBe(raw.ok.events[0].session);
    expect(answer(raw.ok.events)).toBe('You said: headers please');

    const waits = '[[tool name=wait args={"seconds":2}]] take two seconds';
    const lines: string[] = (await sdk(flavor, 'streamed_lines', { params: { message: waits } })).ok;
    const firstId = lines.findIndex((l) => l.startsWith('id: '));
    expect(firstId).toBeGreaterThanOrEqual(0);
    expect(lines.slice(firstId)).toContain(': keep-alive');
    // The same run through the parsed stream: the heartbeats after event ids are no events to it.
    const events = await run(flavor, { message: waits });
    expect(types(events)).toEqual(expect.arrayContaining(['agent_tool_use', 'agent_tool_response', 'agent_completed']));
    expect(events.every((e) => typeof e.type === 'string')).toBe(true);
  });

  test('streaming_tokens: the answer token by token; without it, in one block', async () => {
    const tokens = await run(flavor, { message: '[[long words=5]] a story', streaming_tokens: true });
    expect(types(tokens).filter((t) => t === 'agent_response')).toHaveLength(5);
    const blocks = await run(flavor, { message: '[[long words=5]] a story' });
    expect(types(blocks).filter((t) => t === 'agent_response')).toHaveLength(1);
    expect(answer(tokens)).toBe(answer(blocks));
  });

  test('mode: fast is base (the same model and cost), flash shows the thinking, max is another model', async () => {
    const cost = (events: any[]) => events.find((e) => e.type === 'agent_cost').cost;
    const byMode: Record<string, any[]> = {};
    for (const mode of ['fast', 'flash', 'max'])
      byMode[mode] = await run(flavor, { message: '[[think]] which mode?', mode });
    byMode.base = await run(flavor, { message: '[[think]] which mode?', extra_body: { mode: 'base' } });
    expect(cost(byMode.fast)).toBe(cost(byMode.base));
    expect(new Set([cost(byMode.fast), cost(byMode.flash), cost(byMode.max)]).size).toBe(3);
    expect(types(byMode.flash)).toContain('agent_thinking');
    expect(types(byMode.fast)).not.toContain('agent_thinking');
  });

  test('system and rules reach the model', async () => {
    const marker = `marker-${flavor}-${Date.now()}`;
    await run(flavor, {
      message: `${marker} hi`,
      system: 'You are the SDK test assistant.',
      rules: ['Answer in French.', 'Be brief.'],
    });
    const asked = ctx
      .stack()
      .model!.received()
      .find((r) => r.body.messages.some((m) => m.role === 'user' && String(m.content).includes(marker)));
    const system = String(asked?.body.messages.find((m) => m.role === 'system')?.content);
    expect(system).toContain('You are the SDK test assistant.');
    expect(system).toContain('Answer in French.');
    expect(system).toContain('Be brief.');
  });

  test('agents: the conversation is handed to one', async () => {
    const events = await run(flavor, {
      message: '[[tool name=transfer_to_billing]] my invoice',
      agents: [{ name: 'billing', description: 'Invoices and payments' }],
    });
    expect(events.find((e) => e.type === 'agent_handoff')).toMatchObject({ from: 'main', to: 'billing' });
    expect(types(events).at(-1)).toBe('agent_completed');
  });

  test('mcp_servers (server_name, server_url as the SDK spells them): a tool of the demo MCP server', async () => {
    const events = await run(flavor, {
      message: '[[tool name=add args={"a":2,"b":40}]] add',
      mcp_servers: [{ server_name: 'demo', server_url: ctx.stack().demoMcpUrl }],
    });
    expect(events.find((e) => e.type === 'agent_tool_use').content).toContain('demo__add');
    expect(answer(events)).toBe('tool said: 42');
  });

  test('workflows: each step of the DAG runs, retry_policy, optional and output_schema taken', async () => {
    const steps = [
      {
        id: 'notes',
        name: 'notes',
        description: 'Draft notes',
        depends_on: [],
        retry_policy: { max_attempts: 2, backoff: 'exponential' },
      },
      {
        id: 'mail',
        name: 'mail',
        description: 'Write the mail',
        depends_on: ['notes'],
        optional: true,
        output_schema: { type: 'object', properties: { subject: { type: 'string' } }, required: ['subject'] },
      },
    ];
    const events = await run(flavor, {
      message: 'plan it',
      workflows: [{ id: 'launch', name: 'launch', description: 'a launch', steps }],
    });
    // A step's end is its agent_step with a status (its model turns' agent_step events have none).
    const done = events.filter((e) => e.type === 'agent_step' && e.workflow_id === 'launch' && e.status);
    expect(done.map((e) => [e.step_id, e.status])).toEqual([
      ['notes', 'completed'],
      ['mail', 'completed'],
    ]);
    expect(types(events).at(-1)).toBe('agent_completed');
  });

  test('datastores and queries: the agent reads a registered database, and calls a named query on it', async () => {
    const described = await run(flavor, {
      message: '[[tool name=describe_shop]] what is in it?',
      datastores: [{ id: shopId, name: 'shop' }],
    });
    expect(described.find((e) => e.type === 'agent_tool_response').content).toContain('customers');
    const queried = await run(flavor, {
      message: '[[tool name=customer_city args={"p1":"Ada"}]] where does Ada live?',
      datastores: [{ id: shopId, name: 'shop' }],
      queries: [
        {
          name: 'customer_city',
          description: 'The city a customer lives in',
          query: 'SELECT city FROM customers WHERE name = ?',
        },
      ],
    });
    expect(answer(queried)).toContain('[["London"]]');
  });

  test('final_output: a structured output that fits its schema', async () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, score: { type: 'integer', minimum: 1, maximum: 5 } },
      required: ['title', 'score'],
      additionalProperties: false,
    };
    const events = await run(flavor, { message: 'rate it', final_output: { name: 'rating', strict: true, schema } });
    const out = events.find((e) => e.type === 'agent_final_output');
    expect(out).toMatchObject({ name: 'rating', output: { title: expect.any(String), score: expect.any(Number) } });
  });

  test('background: one task_accepted event with the task id and status, then the end; the task runs on', async () => {
    const events = await run(flavor, { message: 'in the background', background: true });
    expect(events).toEqual([
      {
        type: 'task_accepted',
        task_id: expect.stringMatching(/^task_/),
        session: expect.stringMatching(/^sess_/),
        status: 'queued',
        created_at: expect.any(String),
      },
    ]);
    const result = await ctx.call('GET', `/tasks/${events[0].task_id}/result?wait=30`);
    expect(result.json).toMatchObject({
      status: 'completed',
      output: 'You said: in the background',
      session: events[0].session,
    });
    const raw = await sdk(flavor, 'raw_run', { params: { message: 'raw background', background: true } });
    expect(raw.ok).toMatchObject({
      status: 202,
      headers: { location: `/tasks/${raw.ok.events[0].task_id}`, 'x-task-id': raw.ok.events[0].task_id },
    });
  });

  test('callback: a background run delivers its events to the URL, with the headers given', async () => {
    const hook = `/sdk-${flavor}`;
    const [accepted] = await run(flavor, {
      message: 'call me back',
      background: true,
      callback: { url: receiver.url(hook), headers: { 'X-From-Sdk': flavor } },
    });
    await waitUntil('the task.completed webhook', async () =>
      receiver.accepted(hook).some((d) => d.json.type === 'task.completed'),
    );
    const got = receiver.accepted(hook);
    expect(got.every((d) => d.headers['x-from-sdk'] === flavor)).toBe(true);
    expect(got.find((d) => d.json.type === 'task.completed')!.json).toMatchObject({
      taskId: accepted.task_id,
      status: 'completed',
    });
  });

  test('errors are typed by status; those a retry cannot fix say so, and the SDK sends them once', async () => {
    const bad = await failure(flavor, 'run', { params: { message: 'x', mode: 'turbo' } });
    expect(bad).toMatchObject({ class: 'BadRequestError', status: 400, should_retry: 'false', retries: '0' });
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: 'body.mode', code: 'invalid_value' })]);
    expect(await failure(flavor, 'run', { api_key: 'not-a-key', params: { message: 'x' } })).toMatchObject({
      class: 'AuthenticationError',
      status: 401,
      retries: '0',
    });
    expect(await failure(flavor, 'run', { params: { message: 'x', session: 'sess_nobody' } })).toMatchObject({
      class: 'NotFoundError',
      status: 404,
      retries: '0',
    });
    expect(await failure(flavor, 'messages_get', { session: 'sess_nobody' })).toMatchObject({
      class: 'NotFoundError',
      status: 404,
    });
    expect(await failure(flavor, 'messages_clear', { session: 'not a session!' })).toMatchObject({
      class: 'BadRequestError',
      status: 400,
    });
    // A request that fits the document but cannot be run (a step depending on no step): a 422, typed so, sent once.
    const lonely = {
      id: 'w',
      name: 'w',
      description: 'w',
      steps: [{ id: 'a', name: 'a', description: 'a', depends_on: ['nowhere'] }],
    };
    const unprocessable = await failure(flavor, 'run', { params: { message: 'x', workflows: [lonely] } });
    expect(unprocessable).toMatchObject({
      class: 'UnprocessableEntityError',
      status: 422,
      should_retry: 'false',
      retries: '0',
    });
    expect(unprocessable.body.error).toMatchObject({
      type: 'unprocessable_request',
      details: [expect.objectContaining({ path: 'body.workflows[0].steps[0].depends_on[0]' })],
    });

    // A busy session the request asked not to wait for: 409, not retried (the SDK would retry a bare 409 twice).
    const [long] = await run(flavor, {
      message: '[[tool name=wait args={"seconds":600}]] hold the session',
      background: true,
    });
    const busy = await failure(flavor, 'run', {
      params: { message: 'me too', session: long.session, extra_body: { multitask: 'reject' } },
    });
    expect(busy).toMatchObject({ class: 'ConflictError', status: 409, should_retry: 'false', retries: '0' });
    // A 409 that passes by itself (its result is not ready yet) is retried, as the SDK retries 409s.
    const early = await failure(flavor, 'get', { path: `/tasks/${long.task_id}/result` });
    expect(early).toMatchObject({ class: 'ConflictError', status: 409, should_retry: 'true', retries: '2' });
    expect((await ctx.call('POST', `/tasks/${long.task_id}/cancel`)).status).toBe(202);
    expect((await ctx.call('GET', `/tasks/${long.task_id}/result?wait=30`)).json.status).toBe('cancelled');

    const key = `sdk-${flavor}-${Date.now()}`;
    await run(flavor, { message: 'once', background: true, extra_headers: { 'Idempotency-Key': key } });
    const reused = await failure(flavor, 'run', {
      params: { message: 'another body', background: true, extra_headers: { 'Idempotency-Key': key } },
    });
    expect(reused).toMatchObject({ class: 'UnprocessableEntityError', status: 422, should_retry: 'false' });
    for (const e of [bad, busy, early, reused]) expect(e.api_error).toBe(true);
  });
});
