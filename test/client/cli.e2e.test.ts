// The `agent` CLI (bin/agent) as a user runs it: a child process for the
// commands that print and exit, and a real terminal (tmux) for `agent run` and
// `agent tail`, whose spinner, colors and live output only show on a TTY. One
// stack for the file.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AgentClient } from '../../client';
import { freePort } from '../../src/dev/launcher/processes';
import { KEY_A, useStack, waitUntil } from '../e2e/helpers';
import { cliRunner, lines, ROOT, type Run, userEnv as processEnv } from './cli-process';

jest.setTimeout(120_000);
const ctx = useStack();
let agent: AgentClient;
beforeAll(() => {
  agent = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
});

const cli = cliRunner(() => ctx.stack().gatewayUrl);
const userEnv = (extra: NodeJS.ProcessEnv = {}) => processEnv(ctx.stack().gatewayUrl, extra);

test('--help for agent and each command (stdout, exit 0); a missing or unknown command, flag or argument, or a bad value: usage on stderr, exit 2', async () => {
  const [general, runHelp, none, unknownCmd, unknownFlag, missing, extra, badMode, badLimit, badDuration] =
    await Promise.all([
      cli(['--help']),
      cli(['run', '--help']),
      cli([]),
      cli(['frobnicate']),
      cli(['tasks', '--bogus']),
      cli(['task']),
      cli(['task', 'task_a', 'task_b']),
      cli(['run', 'hi', '--mode', 'turbo']),
      cli(['tasks', '--limit', '0']),
      cli(['run', 'hi', '--max-duration', '1.5']),
    ]);
  expect(general).toMatchObject({ code: 0, stderr: '' });
  for (const cmd of ['run', 'tail', 'tasks', 'task', 'cancel', 'result', 'sessions', 'messages', 'fork', 'replay'])
    expect(general.stdout).toMatch(new RegExp(`^  ${cmd} +\\S`, 'm'));
  expect(runHelp).toMatchObject({ code: 0, stderr: '' });
  expect(runHelp.stdout).toMatch(
    /^usage: agent run "message" \[--background\] \[--session S\] \[--mode flash\|base\|fast\|max\] \[--tokens\] \[--json\]/,
  );
  expect(runHelp.stdout).toContain('--url URL');
  expect(none).toMatchObject({ code: 2, stdout: '' });
  expect(none.stderr).toMatch(/^agent: no command given\nusage: agent <command>/);
  expect(unknownCmd.stderr).toMatch(/^agent: unknown command frobnicate\n/);
  const usage = (r: Run, cmd: string, why: RegExp) => {
    expect(r).toMatchObject({ code: 2, stdout: '' });
    const [first, second] = lines(r.stderr);
    expect(first).toMatch(new RegExp(`^agent ${cmd}: ${why.source}`));
    expect(second).toMatch(new RegExp(`^usage: agent ${cmd} `));
  };
  expect(unknownCmd.code).toBe(2);
  usage(unknownFlag, 'tasks', /Unknown option '--bogus'/);
  usage(missing, 'task', /missing argument/);
  usage(extra, 'task', /unexpected argument: task_b/);
  usage(badMode, 'run', /--mode must be one of flash, base, fast, max, got turbo/);
  usage(badLimit, 'tasks', /--limit must be an integer from 1 to 100, got 0/);
  usage(badDuration, 'run', /--max-duration must be a positive whole number, got 1\.5/);
});

test('run: the answer on stdout, tool calls, steps and cost on stderr; off a terminal no spinner and no colors; exit 0', async () => {
  const r = await cli(['run', '[[tool name=calculate args={"expression":"2+40"}]] compute', '--tokens']);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe('tool said: 42\n');
  expect(lines(r.stderr)).toEqual([
    '[tool] calculate {"expression":"2+40"}',
    '[tool] calculate -> 42',
    expect.stringMatching(/^\[step 1\] \d+ prompt \+ \d+ completion tokens$/),
    expect.stringMatching(/^\[step 2\] \d+ prompt \+ \d+ completion tokens$/),
    expect.stringMatching(/^\[cost\] \$\d+\.\d+$/),
  ]);
  expect(r.stdout + r.stderr).not.toMatch(/\x1b|\r/);
});

test('run --tools offers only the tools named; --tools and --network reach the service, which refuses what it does not offer', async () => {
  const [only, unknown, network] = await Promise.all([
    cli(['run', '[[tool name=calculate args={"expression":"1+1"}]] compute', '--tools', 'current_time']),
    cli(['run', 'x', '--tools', 'calculate,shell']),
    // This stack allowlists loopback for the demo MCP server, so it gives commands no network.
    cli(['run', 'x', '--network']),
  ]);
  // The scripted model calls only tools it was offered, and says so otherwise.
  expect(only).toMatchObject({ code: 0, stdout: 'no tool named calculate is offered\n' });
  expect(unknown).toMatchObject({ code: 1, stdout: '' });
  expect(unknown.stderr).toMatch(/^error: invalid_request: body\.tools\[1\]: .+ \(HTTP 400\)\n$/);
  expect(network).toMatchObject({ code: 1, stdout: '' });
  expect(network.stderr).toBe(
    'error: unprocessable_request: body.computer.network: commands are given no network here (SANDBOX_NETWORK=off) (HTTP 422)\n',
  );
});

test('run --json prints every event as a JSON line; an agent error (here: cancelled) exits 1 with its message on stderr', async () => {
  let taskId: string | undefined;
  const running = cli(['run', '[[tool name=wait args={"seconds":60}]] hold on', '--json'], {}, (out) => {
    taskId ??= /"task_id":"(task_\w+)"/.exec(out)?.[1];
  });
  await waitUntil(
    "the CLI's task running",
    async () => taskId !== undefined && (await agent.tasks.get(taskId)).status === 'running',
  );
  await agent.tasks.cancel(taskId!);
  const r = await running;
  expect(r.code).toBe(1);
  const events = lines(r.stdout).map((l) => JSON.parse(l));
  expect(events[0]).toMatchObject({ type: 'agent_started', seq: 1, task_id: taskId });
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.at(-1)).toMatchObject({ type: 'agent_error', error: { type: 'cancelled' } });
  expect(r.stderr).toBe('');
});

test('run --max-duration: a run that outlasts it ends with the max_duration error on stderr, exit 1', async () => {
  const r = await cli(['run', '[[tool name=wait args={"seconds":60}]] hold on', '--max-duration', '1']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('the run reached its max_duration of 1 s');
});

test('run --background prints the task id (--json: the accepted task); task, tasks, result --wait, cancel and messages show it', async () => {
  const bg = await cli(['run', 'in the background', '--background']);
  expect(bg).toMatchObject({ code: 0, stderr: '' });
  const id = bg.stdout.trim();
  expect(id).toMatch(/^task_\w+$/);
  const result = await cli(['result', id, '--wait', '30']);
  expect(result).toMatchObject({ code: 0, stdout: 'You said: in the background\n', stderr: '' });
  const view = await cli(['task', id]);
  expect(view.code).toBe(0);
  expect(view.stdout).toMatch(new RegExp(`^task +${id}\nstatus +completed\nsession +sess_\\w+\nprogress +100%\n`));
  const session = /^session +(\S+)$/m.exec(view.stdout)![1];

  const json = await cli(['run', 'second', '--background', '--json', '--session', session]);
  const accepted = JSON.parse(json.stdout);
  expect(accepted).toMatchObject({ task_id: expect.stringMatching(/^task_/), session, status: 'queued' });
  const jsonResult = JSON.parse((await cli(['result', accepted.task_id, '--wait', '30', '--json'])).stdout);
  expect(jsonResult).toMatchObject({ status: 'completed', output: 'You said: second' });

  await waitUntil(
    "the session's two tasks listed",
    async () => (await agent.tasks.list({ session })).tasks.length === 2,
  );
  const table = await cli(['tasks', '--session', session]);
  expect(table.code).toBe(0);
  expect(lines(table.stdout)).toEqual([
    expect.stringMatching(/^TASK +STATUS +CREATED \(UTC\) +SESSION +MESSAGE$/),
    expect.stringMatching(
      new RegExp(`^${accepted.task_id} +completed +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +${session} +second$`),
    ),
    expect.stringMatching(new RegExp(`^${id} +completed .+ in the background$`)),
  ]);
  const paged = await cli(['tasks', '--session', session, '--limit', '1', '--json']);
  expect(JSON.parse(paged.stdout)).toMatchObject({
    tasks: [{ task_id: accepted.task_id }],
    next_cursor: expect.any(String),
  });
  const filtered = await cli(['tasks', '--session', session, '--status', 'running']);
  expect(filtered).toMatchObject({ code: 0, stdout: '', stderr: 'no tasks\n' });

  const messages = await cli(['messages', session]);
  expect(messages).toMatchObject({
    code: 0,
    stdout:
      'user: in the background\nassistant: You said: in the background\nuser: second\nassistant: You said: second\n',
  });

  const fork = await cli(['fork', session, '--at', '2', '--as', `${session}-fork`]);
  expect(fork).toMatchObject({
    code: 0,
    stdout: `${session}-fork\n`,
    stderr: `forked from ${session} with 2 messages\n`,
  });
  expect((await cli(['messages', `${session}-fork`])).stdout).toBe(
    'user: in the background\nassistant: You said: in the background\n',
  );

  const long = (await cli(['run', '[[tool name=wait args={"seconds":60}]] long', '--background'])).stdout.trim();
  await waitUntil('the long task running', async () => (await agent.tasks.get(long)).status === 'running');
  const cancel = await cli(['cancel', long]);
  expect(cancel).toMatchObject({ code: 0, stdout: `cancel requested: ${long} (was running)\n` });
  const cancelled = await cli(['result', long, '--wait', '30']);
  expect(cancelled).toMatchObject({ code: 1, stdout: '' });
  expect(cancelled.stderr).toMatch(/^task cancelled: cancelled: /);
});

test('approvals --wait lists a waiting call; approve --input runs it with other arguments; deny --reason; a bad --input exits 2', async () => {
  const gated = (expression: string) =>
    agent.runBackground({
      message: `[[tool name=calculate args={"expression":"${expression}"}]] compute`,
      require_approval: { tools: ['calculate'] },
    });
  const [first, second] = await Promise.all([gated('6 * 7'), gated('1 / 0')]);
  const listed = await cli(['approvals', first.task_id, '--wait', '30']);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toMatch(/^CALL +TOOL +INPUT/);
  expect(listed.stdout).toContain('{"expression":"6 * 7"}');
  const page = JSON.parse((await cli(['approvals', first.task_id, '--json'])).stdout);
  const callId = page.pending[0].tool_call_id;
  expect(await cli(['approve', first.task_id, callId, '--input', '{nope'])).toMatchObject({ code: 2 });
  const approved = await cli(['approve', first.task_id, callId, '--input', '{"expression":"6 * 8"}']);
  expect(approved).toMatchObject({ code: 0, stdout: `${callId}: approved\n` });
  expect((await agent.tasks.result(first.task_id, { wait: 30 })).output).toBe('tool said: 48');

  const other = JSON.parse((await cli(['approvals', second.task_id, '--wait', '30', '--json'])).stdout);
  const denyId = other.pending[0].tool_call_id;
  const denied = await cli(['deny', second.task_id, denyId, '--reason', 'no dividing by zero', '--json']);
  expect(JSON.parse(denied.stdout)).toMatchObject({ decision: 'deny', reason: 'no dividing by zero' });
  const result = await agent.tasks.result(second.task_id, { wait: 30 });
  expect(result.output).toMatch(/denied this call.*no dividing by zero/);
  const after = await cli(['approvals', second.task_id]);
  expect(after.stderr).toMatch(/no call of task_\w+ waits for a decision \(completed\)/);
  expect(after.stderr).toContain(`${denyId}: deny by user (no dividing by zero)`);
});

test('HTTP and connection errors: one line on stderr with the type and message, exit 1', async () => {
  const running = await agent.runBackground({ message: '[[tool name=wait args={"seconds":60}]] not yet' });
  const port = await freePort();
  const [missing, unauthorized, early, waited, refused] = await Promise.all([
    cli(['task', 'task_doesnotexist']),
    cli(['tasks', '--key', 'not-a-key']),
    cli(['result', running.task_id]),
    cli(['result', running.task_id, '--wait', '2']),
    cli(['--url', `http://127.0.0.1:${port}`, 'tasks']),
  ]);
  await agent.tasks.cancel(running.task_id);
  expect(missing).toEqual({ code: 1, stdout: '', stderr: 'error: not_found: task not found (HTTP 404)\n' });
  expect(unauthorized).toMatchObject({ code: 1, stdout: '' });
  expect(unauthorized.stderr).toMatch(/^error: unauthorized: .+ \(HTTP 401; set AGENT_API_KEY or --key\)\n$/);
  // A task not finished is not an error: said as such, with an exit code of its own.
  expect(early).toMatchObject({ code: 3, stdout: '' });
  expect(early.stderr).toBe(
    `task ${running.task_id} is still ${early.stderr.includes('queued') ? 'queued' : 'running'}; ask again later (agent result ${running.task_id} --wait SECONDS)\n`,
  );
  expect(waited).toMatchObject({ code: 3, stdout: '' });
  expect(waited.stderr).toBe(
    `task ${running.task_id} is still running after 2 s; ask again later (agent result ${running.task_id} --wait SECONDS)\n`,
  );
  expect(refused).toMatchObject({ code: 1, stdout: '' });
  expect(refused.stderr).toMatch(
    new RegExp(
      `^error: connection_error: cannot reach http://127.0.0.1:${port}/tasks: fetch failed: ECONNREFUSED .+\n$`,
    ),
  );
});

test('replay <task> replays its history against the current workflows, straight from Temporal; an unknown id exits 1', async () => {
  const done = await agent.run({ message: 'replay me' });
  // The CLI reads Temporal's address and the payload keys as the service does.
  const temporal = { TEMPORAL_ADDRESS: ctx.stack().temporalAddress, PAYLOAD_KEYS: ctx.stack().env.PAYLOAD_KEYS };
  const r = await cli(['replay', done.task_id], temporal);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  expect(lines(r.stdout)).toEqual([
    expect.stringMatching(new RegExp(`^replay OK ${done.task_id} \\S+ \\(\\d+ events\\)$`)),
    '1 replayed, 0 failed',
  ]);
  const unknown = await cli(['replay', 'task_doesnotexist'], temporal);
  expect(unknown).toMatchObject({
    code: 1,
    stdout: '',
    stderr: 'error: workflow task_doesnotexist not found in namespace default\n',
  });
});

test('sessions lists the sessions as a table, or JSON', async () => {
  const { session } = await agent.run({ message: 'a session to list' });
  const table = await cli(['sessions', '--limit', '100']);
  expect(table.code).toBe(0);
  expect(lines(table.stdout)[0]).toMatch(/^SESSION +CREATED \(UTC\) +STATE$/);
  expect(table.stdout).toMatch(
    new RegExp(`^${session} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +(open|closed)$`, 'm'),
  );
  const json = JSON.parse((await cli(['sessions', '--json', '--limit', '100'])).stdout);
  expect(json.sessions).toContainEqual(expect.objectContaining({ session }));
});

// ---- In a real terminal: tmux, on a server of the test's own ----

// A socket file of the test's own: never the user's tmux server, and removed afterwards.
const TMUX_SOCKET = path.join(os.tmpdir(), `agent-cli-test-${process.pid}.tmux`);
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-S', TMUX_SOCKET, ...args], {
    encoding: 'utf8',
    env: userEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });

afterAll(() => {
  try {
    tmux('kill-server');
  } catch {
    // No server was started (the tmux tests did not run).
  }
  fs.rmSync(TMUX_SOCKET, { force: true });
});

/** Runs `command` in a fresh 120x40 terminal; the pane stays after it ends, showing EXIT=<code>. */
function terminal(name: string, command: string, env: NodeJS.ProcessEnv = {}): { text(colors?: boolean): string } {
  const vars = Object.entries({ AGENT_URL: ctx.stack().gatewayUrl, AGENT_API_KEY: KEY_A, ...env }).flatMap(([k, v]) => [
    '-e',
    `${k}=${v}`,
  ]);
  tmux(
    'new-session',
    '-d',
    '-s',
    name,
    '-x',
    '120',
    '-y',
    '40',
    ...vars,
    `cd ${ROOT} && ${command}; echo EXIT=$?; sleep 600`,
  );
  // -J joins lines the terminal wrapped; -e keeps the color codes.
  return { text: (colors = false) => tmux('capture-pane', '-p', '-J', ...(colors ? ['-e'] : []), '-t', name) };
}

test('agent run in a terminal: a spinner while the model is slow, colored tool lines, the answer, then exit 0', async () => {
  const message = '[[tool name=calculate args={"expression":"2+40"}]] [[slow first=2000 delay=50]] compute';
  const term = terminal('run', `bin/agent run '${message}' --tokens`);
  // The spinner: a turning bar, what the agent does, the seconds spent (on stderr, which is the terminal).
  await waitUntil('the spinner on the terminal', async () => /^[|/\\-] [a-z].* \d+\.\ds$/m.test(term.text()), {
    stepMs: 50,
  });
  await waitUntil("the command's exit on the terminal", async () => term.text().includes('EXIT='));
  const text = term.text();
  expect(lines(text)).toEqual([
    '[tool] calculate {"expression":"2+40"}',
    '[tool] calculate -> 42',
    expect.stringMatching(/^\[step 1\] \d+ prompt \+ \d+ completion tokens$/),
    'tool said: 42',
    expect.stringMatching(/^\[step 2\] \d+ prompt \+ \d+ completion tokens$/),
    expect.stringMatching(/^\[cost\] \$\d+\.\d+$/),
    'EXIT=0',
  ]);
  expect(term.text(true)).toContain('\x1b[36m[tool]\x1b[39m calculate -> 42');
});

/** A TCP proxy to the gateway whose open connections can be cut, as a network drop would. */
async function cuttableProxy(target: string): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(port), hostname);
    for (const s of [downstream, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    downstream.pipe(upstream).pipe(downstream);
    downstream.on('close', () => upstream.destroy());
    upstream.on('close', () => downstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut: () => sockets.forEach((s) => s.destroy()),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('agent tail in a terminal follows a background task and, when the connection drops, resumes: the whole answer once, exit 0', async () => {
  const proxy = await cuttableProxy(ctx.stack().gatewayUrl);
  try {
    const task = await agent.runBackground({
      message: '[[slow delay=100 tokens=40]] stream it',
      streaming_tokens: true,
    });
    const term = terminal('tail', `bin/agent tail ${task.task_id}`, { AGENT_URL: proxy.url });
    // The answer has begun on the screen (the filler prose starts so), not ended: cut every connection.
    await waitUntil('the answer begun on the terminal', async () => /^Step retry value/m.test(term.text()), {
      stepMs: 50,
    });
    expect(term.text()).not.toContain('[step 1]');
    proxy.cut();
    await waitUntil("the command's exit on the terminal", async () => term.text().includes('EXIT='));
    const text = term.text();
    const result = await agent.tasks.result(task.task_id);
    expect(result.status).toBe('completed');
    expect(text).toMatch(/^\[reconnecting\] connection lost after event \d+; resuming \(attempt 1\)$/m);
    // The reconnection note splits the answer's line; without it the answer is whole, every token once.
    const answer = text.replace(/\n\[reconnecting\][^\n]*\n/, '');
    expect(answer).toContain(`${result.output}\n[step 1]`);
    expect(answer.split(result.output!)).toHaveLength(2);
    expect(lines(text).at(-1)).toBe('EXIT=0');
  } finally {
    await proxy.close();
  }
});

test('the spinner is gone once the run ends, and Ctrl-C leaves the task running and says how to come back', async () => {
  const term = terminal('interrupt', `bin/agent run '[[tool name=wait args={"seconds":60}]] long'`);
  // The tool call is shown, the timer runs: the spinner says so.
  await waitUntil(
    "the wait tool's line and its spinner on the terminal",
    async () => /^\[tool\] wait \{"seconds":60\}\n[|/\\-] running wait/m.test(term.text()),
    { stepMs: 50 },
  );
  tmux('send-keys', '-t', 'interrupt', 'C-c');
  await waitUntil("the command's exit on the terminal", async () => term.text().includes('EXIT='));
  const text = term.text();
  const taskId = /agent tail (task_\w+)/.exec(text)?.[1];
  expect(lines(text)).toEqual([
    '[tool] wait {"seconds":60}',
    `interrupted; the task goes on: agent tail ${taskId}   (agent cancel ${taskId} stops it)`,
    'EXIT=130',
  ]);
  expect((await agent.tasks.get(taskId!)).status).toBe('running');
  await agent.tasks.cancel(taskId!);
});
