// The agent's browser end to end (real processes, Debian's Chromium, the scripted model calling
// the tools): a page only JavaScript fills is read and its screenshot lands in the workspace,
// announced on the stream and served by the files API; two sessions do not share cookies; cancel
// during a slow navigation ends the task before the page answers; kill -9 of the worker during a
// browser call: the run goes on, and the model reads that the call's outcome and the browser's
// state were lost.
import { KEY_A, readSse, SseEvent, useStack, waitUntil } from './helpers';
import { startWebSite, type WebSite } from '../support/web-site';

jest.setTimeout(180_000);
const ctx = useStack({
  // The test site is on loopback.
  OUTBOUND_ALLOWLIST: '127.0.0.1',
  // A dead worker's browser call is noticed within seconds.
  MODEL_HEARTBEAT_TIMEOUT_MS: '2000',
});
const call: ReturnType<typeof useStack>['call'] = (...args) => ctx.call(...args);
let site: WebSite;

beforeAll(async () => {
  site = await startWebSite();
});
afterAll(() => site?.close());

/** `[[tool ...]]` directives, one per round. */
const rounds = (...calls: [string, Record<string, unknown>][]) =>
  calls.map(([name, args], i) => `[[tool name=${name} turn=${i + 1} args=${JSON.stringify(args)}]]`).join(' ');

async function newSession(name: string): Promise<string> {
  expect((await call('POST', '/sessions', { body: { session: name } })).status).toBe(201);
  return name;
}

async function streamRun(session: string, message: string): Promise<{ output: string; events: SseEvent[] }> {
  const res = await fetch(`${ctx.stack().gatewayUrl}/?session=${session}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ message }),
  });
  expect(res.status).toBe(200);
  const events = await readSse(res);
  expect(events.at(-1)?.data.type).toBe('agent_completed');
  const output = events.filter((e) => e.data.type === 'agent_response').map((e) => e.data.content);
  return { output: output.join(''), events };
}

test('a page only JavaScript fills is read; its screenshot is a file of the workspace, announced and served', async () => {
  const session = await newSession('browse-1');
  const { output, events } = await streamRun(
    session,
    `${rounds(['browser_navigate', { url: `${site.url}/js-only` }], ['browser_take_screenshot', { filename: 'page.png' }])} look`,
  );
  const texts = events.filter((e) => e.data.type === 'agent_tool_response').map((e) => e.data.content as string);
  expect(texts[0]).toContain('Rendered by script');
  expect(output).toContain('/workspace/screenshots/page.png');
  const shot = events.find((e) => e.data.type === 'agent_screenshot')?.data;
  expect(shot).toMatchObject({ path: 'screenshots/page.png', url: `${site.url}/js-only` });
  const changed = events.find((e) => e.data.type === 'agent_files_changed')?.data;
  expect(changed).toMatchObject({ created: ['screenshots/page.png'] });
  const file = await fetch(`${ctx.stack().gatewayUrl}/sessions/${session}/files/screenshots/page.png`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  expect(file.status).toBe(200);
  expect(
    Buffer.from(await file.arrayBuffer())
      .subarray(0, 4)
      .toString('hex'),
  ).toBe('89504e47');
});

test("two sessions' browsers do not share cookies", async () => {
  const a = await newSession('cookies-a');
  const b = await newSession('cookies-b');
  const set = await streamRun(
    a,
    `${rounds(['browser_navigate', { url: `${site.url}/cookie/set?value=alpha` }], ['browser_navigate', { url: `${site.url}/cookie/show` }])} cookies`,
  );
  expect(set.output).toContain('Cookies received: marker=alpha');
  const other = await streamRun(b, `${rounds(['browser_navigate', { url: `${site.url}/cookie/show` }])} cookies`);
  expect(other.output).toContain('Cookies received: (none)');
  // The first session's cookie is still there for its next run.
  const again = await streamRun(a, `${rounds(['browser_navigate', { url: `${site.url}/cookie/show` }])} cookies`);
  expect(again.output).toContain('Cookies received: marker=alpha');
});

test('cancel during a slow navigation ends the task before the page answers', async () => {
  const hitsBefore = site.hits.length;
  const r = await call('POST', `/?session=${await newSession('cancel-browse')}`, {
    body: { message: `${rounds(['browser_navigate', { url: `${site.url}/slow?ms=60000` }])} wait`, background: true },
  });
  await waitUntil('the slow page to be asked for', () => site.hits.slice(hitsBefore).includes('/slow?ms=60000'));
  expect((await call('POST', `/tasks/${r.json.task_id}/cancel`)).status).toBe(202);
  const result = await call('GET', `/tasks/${r.json.task_id}/result?wait=50`);
  // The page answers after 60 s; the result's wait is shorter: the task ended before it.
  expect(result.json.status).toBe('cancelled');
});

test('kill -9 of the worker during a browser call: the run goes on, the model reads that the state was lost', async () => {
  const hitsBefore = site.hits.length;
  const r = await call('POST', `/?session=${await newSession('crash-browse')}`, {
    body: {
      message: `${rounds(['browser_navigate', { url: `${site.url}/slow?ms=20000` }], ['browser_navigate', { url: `${site.url}/` }])} crash`,
      background: true,
    },
  });
  await waitUntil('the slow page to be asked for', () => site.hits.slice(hitsBefore).includes('/slow?ms=20000'));
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const result = await call('GET', `/tasks/${r.json.task_id}/result?wait=60`);
  expect(result.json.status).toBe('completed');
  const responses = result.json.events
    .filter((e: { type: string }) => e.type === 'agent_tool_response')
    .map((e: { content: string; is_error?: boolean }) => ({ ...JSON.parse(e.content), isError: !!e.is_error }));
  expect(responses[0]).toMatchObject({ isError: true, content: expect.stringMatching(/stopped before it answered/) });
  // The next call works on a fresh browser (the restarted worker's).
  expect(responses[1]).toMatchObject({ isError: false, content: expect.stringContaining('Test site') });
});
