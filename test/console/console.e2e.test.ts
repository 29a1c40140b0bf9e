// The web console in a real browser (Debian's Chromium driven by playwright-core) against the real
// processes: sign-in, a run from the playground streaming into its task page, a tool call with its
// input and output, a DAG whose nodes turn completed, cancel, an approval with edited input, a
// schedule paused, a session file uploaded and downloaded, another account's task out of reach,
// and a stream that survives the gateway's restart. The main pages' screenshots land in a temp
// folder, and in docs/console/ with UPDATE_SCREENSHOTS=1 (the README shows one).
import fs from 'node:fs';
import { api, KEY_A, KEY_B, useStack, waitUntil } from '../e2e/helpers';
import { useBrowser } from './browser';

jest.setTimeout(180_000);
const ctx = useStack({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
const call: typeof ctx.call = (...args) => ctx.call(...args);
const b = useBrowser(() => ctx.stack().gatewayUrl);
const { url, shot, signIn, runFromPlayground } = b;
// The test's page (a new one per test).
let page: ReturnType<typeof b.page>;
beforeEach(() => {
  page = b.page();
});

const taskStatus = async (id: string) => (await call('GET', `/tasks/${id}`)).json.status as string;

test('the page: served with a strict CSP, never cached; its assets cached for good; no key needed to load it', async () => {
  const res = await fetch(url());
  expect(res.status).toBe(200);
  expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(res.headers.get('cache-control')).toBe('no-cache');
  const js = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await res.text())![1];
  const asset = await fetch(`${ctx.stack().gatewayUrl}${js}`);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('cache-control')).toContain('immutable');
  expect((await fetch(`${ctx.stack().gatewayUrl}/console/assets/nope.js`)).status).toBe(404);
});

test('sign-in: a wrong key is refused and named; the right one opens the tasks, kept out of the URL', async () => {
  await page.goto(url());
  await shot('sign-in');
  await page.getByLabel('API key').fill('not-a-key');
  await page.keyboard.press('Enter');
  await page.getByRole('alert').filter({ hasText: '401' }).waitFor();
  await signIn();
  expect(page.url()).not.toContain(KEY_A);
  expect(await page.evaluate('sessionStorage.length')).toBe(1);
});

test('a run from the playground streams into its task page: the tool call with its input and output, the answer', async () => {
  await signIn();
  const id = await runFromPlayground('[[tool name=calculate args={"expression":"6 * 7"}]] compute');
  const tool = page.locator('[data-tool-call]').first();
  await tool.locator('.tool-output').filter({ hasText: '42' }).waitFor();
  await expect(tool.locator('.tool-input').textContent()).resolves.toContain('6 * 7');
  await page.getByRole('region', { name: 'Answer' }).filter({ hasText: 'tool said: 42' }).waitFor();
  await page.locator('.status-completed').first().waitFor();
  await shot('task');
  expect(await taskStatus(id)).toBe('completed');
  // The list shows it, live, with its cost once finished.
  await page.goto(url('#/tasks'));
  await page.locator(`tr[data-task="${id}"] .status-completed`).waitFor();
  await shot('tasks');
});

test("the playground lists the API's refusal, each problem at its place; a JSON field that does not parse is named", async () => {
  await signIn();
  await page.goto(url('#/playground'));
  await page.getByLabel('Message').fill('plan');
  await page.locator('#pg-workflows').fill('[{"id": "w", "name": "w", "description": "d", "steps": []}]');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('alert').filter({ hasText: 'body.workflows[0].steps' }).waitFor();
  await page.locator('#pg-workflows').fill('[{"id": ');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('alert').filter({ hasText: 'body.workflows: not JSON' }).waitFor();
  expect(page.url()).toContain('#/playground');
});

test('the task list filters by status and session, and a retried model call shows its error', async () => {
  await call('POST', '/sessions', { body: { session: 'console-filter' } });
  const key = `console-retry-${Date.now()}`;
  const mine = (
    await call('POST', '/?session=console-filter', {
      body: { message: `[[fail status=500 times=1 key=${key}]] hi`, background: true },
    })
  ).json.task_id;
  await signIn();
  await page.goto(url('#/tasks?session=console-filter'));
  await page.locator(`tr[data-task="${mine}"] .status-completed`).waitFor();
  expect(await page.locator('tr[data-task]').count()).toBe(1);
  await page.getByLabel('Status').selectOption('failed');
  await page.waitForURL(/status=failed/);
  await page.getByText('No tasks.').waitFor();
  await page.goto(url(`#/tasks/${mine}`));
  await page.locator('.notice-retry').filter({ hasText: 'attempt 1 failed' }).waitFor();
});

test('a DAG drawn as a graph whose nodes turn completed', async () => {
  await signIn();
  const step = (sid: string, depends_on: string[]) => ({
    id: sid,
    name: `step ${sid}`,
    description: `do ${sid}`,
    depends_on,
  });
  await runFromPlayground('[[say text="planned"]] run the plan', {
    workflows: [
      {
        id: 'plan',
        name: 'The plan',
        description: 'three steps',
        steps: [step('a', []), step('b', ['a']), step('c', ['a'])],
      },
    ],
  });
  for (const s of ['a', 'b', 'c']) await page.locator(`[data-step="plan/${s}"][data-status="completed"]`).waitFor();
  await page.locator('.page-head .status-completed').waitFor();
  // Each step's answer, tagged with its step, then the task's own.
  await waitUntil(
    'four answers',
    () => page.getByRole('region', { name: 'Answer' }).count(),
    (n) => n === 4,
  );
  await expect(page.getByRole('region', { name: 'Answer' }).last().textContent()).resolves.not.toContain('step plan/');
  await shot('dag');
});

test('cancel from the page ends a running task cancelled', async () => {
  await signIn();
  const id = await runFromPlayground('[[slow delay=200 tokens=600]] a long answer');
  await page.getByRole('region', { name: 'Answer' }).waitFor();
  await page.getByRole('button', { name: 'Cancel task' }).click();
  await page.locator('.page-head .status-cancelled').waitFor();
  expect(await taskStatus(id)).toBe('cancelled');
});

test('an approval from the page: the call waits, is approved with edited input, and runs with it', async () => {
  await signIn();
  const id = await runFromPlayground('[[tool name=calculate args={"expression":"1 + 1"}]] compute', {
    require_approval: { tools: ['calculate'] },
  });
  const waiting = page.getByRole('region', { name: 'Approval of calculate' });
  await waiting.waitFor();
  await page.locator('.page-head .status-input_required').waitFor();
  await shot('approval');
  await waiting.getByLabel(/Input/).fill('{"expression": "20 + 22"}');
  await waiting.getByRole('button', { name: 'Approve' }).click();
  await page.locator('[data-tool-call] .tool-output').filter({ hasText: '42' }).waitFor();
  await page.locator('.page-head .status-completed').waitFor();
  expect(await taskStatus(id)).toBe('completed');
});

test('a schedule paused from the page', async () => {
  const made = await call('POST', '/', {
    body: { message: 'now', schedules: [{ schedule: '0 9 * * MON', message: 'weekly' }] },
  });
  const sched = made.json.schedules[0].schedule_id as string;
  await signIn();
  await page.goto(url('#/schedules'));
  const row = page.locator(`[data-schedule="${sched}"]`);
  await row.getByRole('button', { name: 'Pause' }).click();
  await row.getByRole('button', { name: 'Unpause' }).waitFor();
  await shot('schedules');
  expect((await call('GET', `/schedules/${sched}`)).json.paused).toBe(true);
});

test("a session's file uploaded and downloaded from the page", async () => {
  await call('POST', '/sessions', { body: { session: 'console-files' } });
  await signIn();
  await page.goto(url('#/sessions/console-files'));
  await page
    .getByLabel('Upload a file')
    .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('kept by the console\n') });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.locator('[data-file="notes.txt"]').waitFor();
  expect((await call('GET', '/sessions/console-files/files/notes.txt')).text).toBe('kept by the console\n');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download notes.txt' }).click(),
  ]);
  expect(fs.readFileSync((await download.path())!, 'utf8')).toBe('kept by the console\n');
  await shot('session');
});

test("another account's task is out of reach: not listed, and its page says 404", async () => {
  const theirs = (await call('POST', '/', { key: KEY_B, body: { message: 'private', background: true } })).json
    .task_id as string;
  await signIn();
  await page.goto(url(`#/tasks/${theirs}`));
  await page.getByRole('alert').filter({ hasText: '404' }).first().waitFor();
  // The stream is refused too, and not asked for again.
  await page.locator('[data-stream="refused"]').waitFor();
  await page.goto(url('#/tasks'));
  await page.locator('table.list').waitFor();
  expect(await page.locator(`tr[data-task="${theirs}"]`).count()).toBe(0);
});

test("a task's stream survives the gateway's restart: every token once, the answer whole", async () => {
  await signIn();
  const id = await runFromPlayground('[[slow delay=60 tokens=120]] a long answer');
  const answer = page.getByRole('region', { name: 'Answer' });
  await answer.waitFor();
  const gateway = ctx.stack().children.gateway;
  gateway.proc.kill('SIGKILL');
  await gateway.exited;
  await page.locator('[data-stream="reconnecting"]').waitFor();
  await ctx.stack().restarters.gateway();
  await page.locator('.page-head .status-completed').waitFor({ timeout: 60_000 });
  await page.locator('[data-stream="ended"]').waitFor();
  // The answer on the page is the run's own, no token lost or repeated.
  const result = await waitUntil(
    'the result',
    () => api(ctx.stack())('GET', `/tasks/${id}/result`),
    (r) => r.status === 200,
  );
  expect((await answer.locator('.markdown').textContent())!.trim()).toBe(result.json.output.trim());
});
