// The session's computer end to end (real processes, the scripted model calling the tools): a
// coding task over HTTP (the editor writes fib.py, bash runs it, the answer carries its output,
// the files API lists and serves the file, the session's next run finds it), a file uploaded
// through the API read by the agent, the sandbox's limits each followed by a healthy service,
// kill -9 of the worker during a command (it ran once; the model reads that its outcome is
// unknown), cancel during a long command (its process tree gone), two workers sharing the
// workspaces, and a run given network (an allowlisted registry, never the service's ports).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KEY_A, KEY_B, readSse, SseEvent, useStack, waitUntil } from './helpers';
import { startNode, type Child } from '../../src/dev/launcher/processes';

jest.setTimeout(180_000);
const ctx = useStack({
  MODEL_HEARTBEAT_TIMEOUT_MS: '2000',
  SANDBOX_MEMORY_MB: '256',
  SANDBOX_MAX_PROCESSES: '64',
  BASH_OUTPUT_MODEL_BYTES: '2048',
  // The "package registry" of the network test on 127.0.0.2; the service's own ports stay refused.
  OUTBOUND_ALLOWLIST: '127.0.0.2/32',
});
const call: ReturnType<typeof useStack>['call'] = (...args) => ctx.call(...args);

/** `[[tool ...]]` directives, one per round: each call's arguments as JSON. */
const rounds = (...calls: [string, Record<string, unknown>][]) =>
  calls.map(([name, args], i) => `[[tool name=${name} turn=${i + 1} args=${JSON.stringify(args)}]]`).join(' ');

/** What each tool call of a run answered, in order. */
const toolResults = (events: SseEvent[]) =>
  events
    .filter((e) => e.data.type === 'agent_tool_response')
    .map((e) => ({ ...(JSON.parse(e.data.content) as { content: string }), isError: !!e.data.is_error }));

/** A new session of KEY_A's account named `name`. */
async function newSession(name: string): Promise<string> {
  const r = await call('POST', '/sessions', { body: { session: name } });
  expect(r.status).toBe(201);
  return name;
}

async function run(
  session: string,
  message: string,
  extra: Record<string, unknown> = {},
): Promise<{ output: string; events: SseEvent[] }> {
  const res = await fetch(`${ctx.stack().gatewayUrl}/?session=${session}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY_A}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    },
    body: JSON.stringify({ message, ...extra }),
  });
  expect(res.status).toBe(200);
  const events = await readSse(res);
  const end = events[events.length - 1].data;
  expect(end.type).toBe('agent_completed');
  const answer = events.filter((e) => e.data.type === 'agent_response').map((e) => e.data.content);
  return { output: answer.join(''), events };
}

const FIB = ['import sys', 'a, b = 0, 1', 'for _ in range(int(sys.argv[1])):', '    a, b = b, a + b', 'print(a)', ''];

test('a coding task: the editor writes fib.py, bash runs it, the answer has its output; the file is listed, served and found by the next run', async () => {
  const session = await newSession('coding-1');
  const { output, events } = await run(
    session,
    `${rounds(
      ['str_replace_editor', { command: 'create', path: 'fib.py', file_text: FIB.join('\n') }],
      ['bash', { command: 'python3 fib.py 30 | tee fib.txt' }],
    )} write a fibonacci script and run it`,
  );
  expect(output).toContain('832040');
  const changed = events.filter((e) => e.data.type === 'agent_files_changed').map((e) => e.data);
  expect(changed.map((c) => c.created)).toEqual([['fib.py'], ['fib.txt']]);
  const listed = await call('GET', `/sessions/${session}/files`);
  expect(listed.status).toBe(200);
  expect(listed.json.files.map((f: { path: string }) => f.path)).toEqual(expect.arrayContaining(['fib.py', 'fib.txt']));
  const file = await fetch(`${ctx.stack().gatewayUrl}/sessions/${session}/files/fib.txt`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  expect(await file.text()).toBe('832040\n');
  // The next run of the session: the file is there, and so is the shell's directory.
  const next = await run(session, `${rounds(['bash', { command: 'cat fib.txt && ls' }])} again`);
  expect(next.output).toContain('832040');
  expect(next.output).toContain('fib.py');
  // Another account's session of that name is not this one.
  expect((await call('GET', `/sessions/${session}/files`, { key: KEY_B })).status).toBe(404);
});

test('a file uploaded through the API is read by the agent', async () => {
  const session = await newSession('upload-1');
  const put = await call('PUT', `/sessions/${session}/files/data/input.csv`, {
    raw: 'name,score\nada,3\nbob,5\n',
    contentType: 'text/csv',
  });
  expect(put.status).toBe(201);
  const { output } = await run(
    session,
    `${rounds(['bash', { command: 'awk -F, \'NR>1 {s+=$2} END {print "total", s}\' data/input.csv' }])} sum`,
  );
  expect(output).toContain('total 8');
});

test("the sandbox's limits end a command and the next one works: fork bomb, memory, endless loop, output flood", async () => {
  const session = await newSession('limits-1');
  const { events } = await run(
    session,
    `${rounds(
      // The shell stays (sleep) while the bomb grows: without it, a slow machine's shell could exit,
      // ending the sandbox's processes, before the bomb reached the limit (then nothing was refused).
      ['bash', { command: ':(){ :|:& };: ; sleep 20', timeout: 30 }],
      ['bash', { command: "python3 -c 'x = bytearray(4 * 1024**3); print(len(x))'" }],
      ['bash', { command: 'while :; do :; done', timeout: 2 }],
      ['bash', { command: 'yes flood' }],
      ['bash', { command: 'echo still here' }],
    )} try the limits`,
  );
  const results = toolResults(events);
  expect(results.map((r) => r.isError)).toEqual([true, true, true, true, false]);
  expect(results[0].content).toMatch(/more than 64 processes/);
  expect(results[1].content).toMatch(/more than 256 MiB of memory/);
  expect(results[2].content).toMatch(/longer than its timeout of 2 s/);
  expect(results[3].content).toMatch(/more than 64 MiB of output/);
  expect(results[4].content).toContain('still here');
  expect((await fetch(`${ctx.stack().gatewayUrl}/readyz`)).status).toBe(200);
});

test("through the service, a command sees none of the worker's secrets, ports or other sessions' files, and runs unprivileged", async () => {
  const stack = ctx.stack();
  const ports = [new URL(stack.gatewayUrl).port, new URL(stack.redisUrl).port, stack.temporalAddress.split(':').pop()];
  const other = await newSession('isolation-other');
  await run(other, `${rounds(['bash', { command: 'echo secret-of-other > mine.txt' }])} write`);
  const hostFiles = stack.env.WORKSPACE_DIR!;
  const session = await newSession('isolation-1');
  const probe = [
    'id -u',
    'env | cut -d= -f1 | sort | paste -sd, -',
    ...ports.map((p) => `(echo > /dev/tcp/127.0.0.1/${p}) 2>/dev/null && echo "open ${p}" || echo "closed ${p}"`),
    `ls ${hostFiles} 2>&1 | head -1`,
    `grep -rs secret-of-other / --include=mine.txt 2>/dev/null | head -1; echo searched`,
  ].join('; ');
  const { events } = await run(session, `${rounds(['bash', { command: probe }])} look around`);
  const [result] = toolResults(events);
  const out = result.content.split('stdout:')[1];
  const lines = out.trim().split('\n');
  expect(lines[0]).toBe('1000');
  // The worker's environment holds OPENAI_BASE_URL, API_KEYS, PAYLOAD_KEYS, REDIS_URL: none reaches the command.
  expect(lines[1].split(',').sort()).toEqual(expect.arrayContaining(['HOME', 'PATH']));
  for (const secret of ['API_KEYS', 'PAYLOAD_KEYS', 'REDIS_URL', 'OPENAI_BASE_URL', 'TEMPORAL_ADDRESS'])
    expect(lines[1]).not.toContain(secret);
  for (const p of ports) expect(out).toContain(`closed ${p}`);
  expect(out).toMatch(/No such file or directory/);
  expect(out).not.toContain('secret-of-other');
  expect(out).toContain('searched');
});

test("computer.network: a command reaches an allowlisted registry through the policy, never the service's ports; without it, nothing", async () => {
  const registry = http.createServer((req, res) => res.end(`package index at ${req.url}\n`));
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.2', resolve));
  try {
    const at = `127.0.0.2:${(registry.address() as AddressInfo).port}`;
    const stack = ctx.stack();
    const ports = [
      new URL(stack.gatewayUrl).port,
      new URL(stack.redisUrl).port,
      stack.temporalAddress.split(':').pop(),
    ];
    const session = await newSession('network-1');
    const command = [
      `curl -sS http://${at}/simple/`,
      `python3 -c 'import urllib.request; print(urllib.request.urlopen("http://${at}/py").read().decode().strip())'`,
      // Through the proxy (--noproxy ''), as a command that wanted the service would try.
      ...ports.map((p) => `curl -sS --noproxy '' http://127.0.0.1:${p}/ | head -c 70; echo`),
    ].join('; ');
    const allowed = await run(session, `${rounds(['bash', { command }])} fetch`, { computer: { network: true } });
    const out = toolResults(allowed.events)[0].content;
    expect(out).toContain('package index at /simple/');
    expect(out).toContain('package index at /py');
    for (const p of ports) expect(out).toContain(`http://127.0.0.1:${p}/ resolves to 127.0.0.1, a loopback address`);
    // The same session's next run, without the field: no proxy, no network.
    const plain = await run(
      session,
      `${rounds(['bash', { command: `env | grep -ci proxy; curl -sS http://${at}/ 2>&1` }])} again`,
    );
    const none = toolResults(plain.events)[0].content;
    expect(none).toMatch(/stdout:\s*0\s+curl: \(7\) Failed to connect/);
    expect(none).not.toContain('package index');
  } finally {
    await new Promise((resolve) => registry.close(resolve));
  }
});

/** The host processes whose command line holds `marker` (a sandboxed command's, seen from outside). */
function processesWith(marker: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('kill -9 of the worker during a command: it ran once, the model reads that its outcome is unknown, the run goes on', async () => {
  const session = await newSession('crash-1');
  const r = await call('POST', `/?session=${session}`, {
    body: {
      message: `${rounds(
        ['bash', { command: 'echo ran >> counter.txt; sleep 6; echo slept' }],
        ['bash', { command: 'wc -l < counter.txt' }],
      )} count`,
      background: true,
    },
  });
  const id = r.json.task_id;
  await waitUntil('the command to have started', async () => {
    const f = await call('GET', `/sessions/${session}/files`);
    return f.json?.files?.some((x: { path: string }) => x.path === 'counter.txt');
  });
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const result = await call('GET', `/tasks/${id}/result?wait=60`);
  expect(result.json.status).toBe('completed');
  const results = toolResults(result.json.events.map((data: unknown) => ({ data })));
  expect(results[0]).toMatchObject({
    isError: true,
    content: expect.stringMatching(/outcome of this call is unknown/),
  });
  // The side effect happened once: the command was not run again after the crash.
  expect(results[1].content).toMatch(/^1$/m);
  expect(results[1].content).not.toContain('slept');
});

test('cancel during a long command: the task ends cancelled and the command’s process tree is gone', async () => {
  const marker = `sleep-marker-${Date.now()}`;
  const r = await call('POST', `/?session=${await newSession('cancel-1')}`, {
    body: {
      message: `${rounds(['bash', { command: `(exec -a ${marker} sleep 1000) & setsid bash -c 'exec -a ${marker} sleep 1000' & exec -a ${marker} sleep 1000` }])} wait`,
      background: true,
    },
  });
  const id = r.json.task_id;
  await waitUntil('the command to be running', () => processesWith(marker).length >= 3);
  expect((await call('POST', `/tasks/${id}/cancel`)).status).toBe(202);
  // The issue's promise: gone within 5 s of the cancel.
  await waitUntil('the process tree to be gone', () => processesWith(marker).length === 0, { timeoutMs: 5000 });
  await waitUntil(
    'the task to be cancelled',
    async () => (await call('GET', `/tasks/${id}`)).json.status === 'cancelled',
  );
});

test("two workers: each run of a session sees the session's files, whichever worker runs its commands", async () => {
  const stack = ctx.stack();
  const second: Child = startNode('worker-2', 'src/worker/main.ts', [], { env: stack.env });
  try {
    await waitUntil('the second worker to be ready', () => second.isReady(), { timeoutMs: 90_000 });
    const session = await newSession('two-workers');
    for (let i = 1; i <= 6; i++) {
      const { output } = await run(
        session,
        `${rounds(['bash', { command: `echo ${i} >> log.txt; cat log.txt | paste -sd, -` }])} step ${i}`,
      );
      expect(output).toContain(Array.from({ length: i }, (_, k) => k + 1).join(','));
      // Half-way, the first worker goes: the rest must run on the second.
      if (i === 3) {
        stack.children.worker.proc.kill('SIGKILL');
        await stack.children.worker.exited;
      }
    }
  } finally {
    await second.stop();
    await stack.startWorker();
  }
});
