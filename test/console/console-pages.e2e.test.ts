// The console's other pages in a real browser, as an operator uses them: a session's thread,
// forked at a message and the fork deleted; a knowledge base registered, a document added and
// removed; a SQLite upload the agent then queries; thinking folded away; the task list's pages; a
// message sent into a running task; a finished task rewound from its page; the link to the
// Temporal Web UI; dark mode following the system; the shell usable from the keyboard.
import path from 'node:path';
import { useStack, waitUntil } from '../e2e/helpers';
import { useBrowser } from './browser';

jest.setTimeout(180_000);
const ctx = useStack({ TEMPORAL_UI_URL: 'http://ui.test:8233' });
const call: typeof ctx.call = (...args) => ctx.call(...args);
const b = useBrowser(() => ctx.stack().gatewayUrl);
const { url, shot, signIn, runFromPlayground } = b;
let page: ReturnType<typeof b.page>;
beforeEach(() => {
  page = b.page();
  // Deleting asks first (confirm()): the operator says yes.
  page.on('dialog', (d) => void d.accept());
});

test("a session's thread; forked at its first exchange, the fork's thread is that exchange; the fork deleted", async () => {
  await call('POST', '/sessions', { body: { session: 'console-thread' } });
  for (const m of ['first question', 'second question']) {
    expect((await call('POST', '/?session=console-thread', { body: { message: m } })).status).toBe(200);
  }
  await signIn();
  await page.goto(url('#/sessions'));
  await page.getByRole('link', { name: 'console-thread' }).click();
  const thread = page.locator('.thread');
  await thread.getByText('You said: second question').waitFor();
  await shot('session-thread');
  await page.getByLabel('Keep the first N messages').fill('2');
  await page.getByLabel('New session id (optional)').fill('console-fork');
  await page.getByRole('button', { name: 'Fork' }).click();
  await page.waitForURL(/#\/sessions\/console-fork$/);
  await page.locator('.thread').getByText('You said: first question').waitFor();
  expect(await page.locator('.thread').getByText('second question').count()).toBe(0);
  expect((await call('GET', '/sessions/console-fork/messages')).json.messages).toHaveLength(2);
  await page.getByRole('button', { name: 'Delete session' }).click();
  await page.waitForURL(/#\/sessions$/);
  await waitUntil(
    'the fork gone',
    async () => (await call('GET', '/sessions/console-fork/messages')).status,
    (s) => s === 404,
  );
});

test('a knowledge base registered from the page, a document added and found, then removed', async () => {
  await signIn();
  await page.goto(url('#/datastores'));
  await page.getByLabel('Kind').selectOption('documents');
  await page.getByLabel('Name', { exact: true }).fill('handbook');
  await page.getByLabel('Description (optional)').fill('the team handbook');
  await page.getByRole('button', { name: 'Register' }).click();
  await page.waitForURL(/#\/datastores\/ds_/);
  const id = decodeURIComponent(page.url().split('#/datastores/')[1]);
  await page.getByLabel('Title (optional)').fill('Holidays');
  await page.getByLabel('Document id (optional)').fill('holidays');
  await page.getByLabel('Text', { exact: true }).fill('Everyone has 30 days of holiday a year.');
  await page.getByRole('button', { name: 'Add document' }).click();
  await page.locator('[data-document="holidays"]').waitFor();
  await shot('datastore');
  const listed = await call('GET', `/datastores/${id}/documents`);
  expect(listed.json.documents.map((d: { id: string }) => d.id)).toEqual(['holidays']);
  await page.getByRole('button', { name: 'Remove holidays' }).click();
  await waitUntil(
    'the document removed',
    async () => (await call('GET', `/datastores/${id}/documents`)).json.documents.length,
    (n) => n === 0,
  );
  await page.goto(url('#/datastores'));
  await page.getByRole('link', { name: 'handbook' }).waitFor();
});

test('a SQLite database uploaded from the page is queried by the agent through a named query', async () => {
  await signIn();
  await page.goto(url('#/datastores'));
  await page.getByLabel('Kind').selectOption('sqlite-upload');
  await page.getByLabel('Name', { exact: true }).fill('shop');
  await page.getByLabel('SQLite database file').setInputFiles(path.join(__dirname, '../../examples/shop.db'));
  await page.getByRole('button', { name: 'Register' }).click();
  await page.waitForURL(/#\/datastores\/ds_/);
  const id = decodeURIComponent(page.url().split('#/datastores/')[1]);
  const run = await call('POST', '/', {
    body: {
      message: '[[tool name=customer_city args={"p1":"Ada"}]] where does Ada live?',
      datastores: [{ id, name: 'shop' }],
      queries: [
        {
          name: 'customer_city',
          description: 'The city of a customer',
          query: 'SELECT city FROM customers WHERE name = ?',
        },
      ],
    },
  });
  expect(run.json.output).toContain('London');
});

test('thinking is folded away until opened; the task list pages through its cursors', async () => {
  await call('POST', '/sessions', { body: { session: 'console-pages' } });
  const ids: string[] = [];
  for (let i = 0; i < 22; i++) {
    ids.push(
      (
        await call('POST', '/?session=console-pages', {
          body: { message: `[[think words=5]] task ${i}`, mode: 'flash' },
        })
      ).json.task_id,
    );
  }
  await signIn();
  await page.goto(url(`#/tasks/${ids[0]}`));
  const thinking = page.locator('details.thinking');
  await thinking.waitFor();
  expect(await thinking.getAttribute('open')).toBeNull();
  await thinking.locator('summary').click();
  expect(await thinking.getAttribute('open')).not.toBeNull();
  await page.goto(url('#/tasks?session=console-pages'));
  // Newest first, 20 a page: the last two made are on page one, the first two on page two.
  await page.locator(`tr[data-task="${ids[21]}"]`).waitFor();
  expect(await page.locator('tr[data-task]').count()).toBe(20);
  await page.getByRole('button', { name: 'Next' }).click();
  await page.locator(`tr[data-task="${ids[0]}"]`).waitFor();
  expect(await page.locator('tr[data-task]').count()).toBe(2);
  await page.getByRole('button', { name: 'Previous' }).click();
  await page.locator(`tr[data-task="${ids[21]}"]`).waitFor();
});

test('a message sent into a running task from its page is read by its next turn', async () => {
  await signIn();
  const id = await runFromPlayground('[[slow delay=100 tokens=30]] first');
  await page.getByRole('region', { name: 'Answer' }).first().waitFor();
  await page.getByLabel('Send a message into the task').fill('and then this');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('region', { name: 'Message sent in' }).filter({ hasText: 'and then this' }).waitFor();
  await page.getByRole('region', { name: 'Answer' }).filter({ hasText: 'You said: and then this' }).waitFor();
  expect((await call('GET', `/tasks/${id}/result?wait=30`)).json.output).toBe('You said: and then this');
});

test('a finished task rewound from its page: the old branch greyed as superseded, the new answer after it', async () => {
  await signIn();
  const id = await runFromPlayground('[[tool name=calculate args={"expression":"6 * 7"}]] compute');
  await page.locator('.page-head .status-completed').waitFor();
  await page.getByLabel('Rewind to model turn').fill('1');
  await page.getByLabel('With a message (optional)').fill('[[say text="Let us not compute after all."]] never mind');
  await page.getByLabel('replace the last user message').check();
  await page.getByRole('button', { name: 'Rewind' }).click();
  await page.getByRole('region', { name: 'Answer' }).filter({ hasText: 'Let us not compute after all.' }).waitFor();
  await page.locator('.page-head .status-completed').waitFor();
  await page.getByRole('status').filter({ hasText: 'Rewound to turn 1' }).first().waitFor();
  // The first branch's tool call is still there, marked superseded.
  await page.locator('[data-tool-call].superseded').waitFor();
  expect((await call('GET', `/tasks/${id}/result`)).json.output).toBe('Let us not compute after all.');
});

test('each task links to its workflow in the Temporal Web UI when TEMPORAL_UI_URL is set', async () => {
  const id = (await call('POST', '/', { body: { message: 'hi', background: true } })).json.task_id;
  await signIn();
  await page.goto(url(`#/tasks/${id}`));
  const link = page.getByRole('link', { name: 'Open in the Temporal Web UI' });
  expect(await link.getAttribute('href')).toBe(`http://ui.test:8233/namespaces/default/workflows/${id}`);
});

test('dark mode follows the system, and the shell works from the keyboard alone', async () => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(url());
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.id')).toBe('api-key');
  await page.keyboard.type('key-alice-0123456789');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Tasks' }).waitFor();
  expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(13, 17, 23)');
  await page.locator('table.list').waitFor();
  await shot('tasks-dark');
  // Tab order: the skip link first, then the sections; Enter follows a link.
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
  for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Schedules');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  expect(await page.getByRole('link', { name: 'Schedules' }).getAttribute('aria-current')).toBe('page');
});
