// The `agent` CLI's datastores (bin/agent as a child process, as a user runs
// it): `agent datastore add` (an upload of examples/shop.db, a knowledge base,
// a PostgreSQL URL that never comes back), `agent datastores`, `agent
// datastore <id>` and --delete, `agent documents` (add .md, .json and .txt
// files, list, page, delete), and `agent run --datastore --query` answering
// from the database. One stack for the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentClient, NotFoundError } from '../../client';
import { KEY_A, useStack } from '../e2e/helpers';
import { cliRunner, lines, TIME, type Run } from './cli-process';

jest.setTimeout(90_000);
const ctx = useStack();
const cli = cliRunner(() => ctx.stack().gatewayUrl);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-cli-datastores-'));
let agent: AgentClient;
beforeAll(() => {
  agent = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const DS = 'ds_[0-9a-f]{32}';
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

test('bad usage: no source, two sources, --allow-sql on documents, add flags without add, --title without --add, a malformed --query; one line and the usage, exit 2', async () => {
  const runs = await Promise.all([
    cli(['datastore', 'add', 'x']),
    cli(['datastore', 'add', 'x', '--upload', 'a.db', '--documents']),
    cli(['datastore', 'add', 'x', '--documents', '--allow-sql']),
    cli(['datastore', `ds_${'0'.repeat(32)}`, '--upload', 'a.db']),
    cli(['datastore', 'add']),
    cli(['datastore', 'ds_x', 'extra']),
    cli(['documents', 'ds_x', '--title', 'T']),
    cli(['documents', 'ds_x', '--add', 'a.md', '--delete', 'd']),
    cli(['run', 'hi', '--query', 'no-sql-here']),
    cli(['--help']),
  ]);
  const usage = (r: Run, cmd: string, why: string) => {
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(lines(r.stderr)).toEqual([
      `agent ${cmd}: ${why}`,
      expect.stringMatching(new RegExp(`^usage: agent ${cmd} `)),
    ]);
  };
  const sources = 'give one of --postgres URL, --sqlite-path PATH, --upload FILE, --documents';
  usage(runs[0], 'datastore', sources);
  usage(runs[1], 'datastore', `${sources}; got --upload and --documents`);
  usage(runs[2], 'datastore', '--allow-sql goes with --postgres, --sqlite-path or --upload');
  usage(runs[3], 'datastore', '--upload goes with add');
  usage(runs[4], 'datastore', 'missing argument: the name of the datastore');
  usage(runs[5], 'datastore', 'unexpected argument: extra');
  usage(runs[6], 'documents', '--title goes with --add');
  usage(runs[7], 'documents', 'give at most one of --add, --delete');
  usage(runs[8], 'run', '--query must be NAME=SQL, got no-sql-here');
  for (const cmd of ['datastores', 'datastore', 'documents'])
    expect(runs[9].stdout).toMatch(new RegExp(`^  ${cmd} +\\S`, 'm'));
});

test('datastore add --upload examples/shop.db prints the id; datastores lists it; datastore <id> shows it; run --datastore --query answers from the file; --delete removes it', async () => {
  expect(await cli(['datastores'])).toEqual({ code: 0, stdout: '', stderr: 'no datastores\n' });
  const added = await cli([
    'datastore',
    'add',
    'shop',
    '--upload',
    'examples/shop.db',
    '--allow-sql',
    '--description',
    'customers and orders',
  ]);
  expect(added.code).toBe(0);
  const id = added.stdout.trim();
  expect(id).toMatch(new RegExp(`^${DS}$`));
  expect(added.stderr).toBe(`in a run: agent run --datastore ${id}:shop "..."\n`);

  const table = await cli(['datastores']);
  expect(table).toMatchObject({ code: 0, stderr: '' });
  expect(lines(table.stdout)).toEqual([
    expect.stringMatching(/^DATASTORE +NAME +TYPE +ALLOW SQL +CREATED \(UTC\)$/),
    expect.stringMatching(new RegExp(`^${id} +shop +sqlite +yes +${TIME}$`)),
  ]);
  const json = JSON.parse((await cli(['datastores', '--json'])).stdout);
  expect(json).toEqual({
    datastores: [expect.objectContaining({ id, name: 'shop', type: 'sqlite', allow_sql: true, uploaded: true })],
  });

  const shown = await cli(['datastore', id]);
  expect(shown).toMatchObject({ code: 0, stderr: '' });
  expect(lines(shown.stdout)).toEqual([
    `datastore   ${id}`,
    'name        shop',
    'type        sqlite (uploaded)',
    'description customers and orders',
    'allow sql   yes',
    expect.stringMatching(/^timeout     \d+ ms$/),
    expect.stringMatching(/^max rows    \d+$/),
    expect.stringMatching(new RegExp(`^created     ${TIME}$`)),
  ]);
  expect(JSON.parse((await cli(['datastore', id, '--json'])).stdout)).toEqual(await agent.datastores.get(id));

  const [named, own] = await Promise.all([
    cli([
      'run',
      '[[tool name=customer_city args={"p1":"Ada"}]] where?',
      '--datastore',
      `${id}:shop`,
      '--query',
      'customer_city=SELECT city FROM customers WHERE name = ?',
    ]),
    // Without :NAME, the datastore's registered name names its tools.
    cli([
      'run',
      '[[tool name=query_shop args={"sql":"SELECT name FROM customers WHERE city = \'Helsinki\'"}]] who?',
      '--datastore',
      id,
    ]),
  ]);
  expect(named.code).toBe(0);
  expect(named.stdout).toContain('London');
  expect(JSON.parse(named.stdout.trim().replace(/^tool said: /, ''))).toMatchObject({
    columns: ['city'],
    rows: [['London']],
  });
  expect(named.stderr).toMatch(/customer_city/);
  expect(own.code).toBe(0);
  expect(own.stdout).toContain('Linus');
  // A --query with two SQL datastores in the run: which one is ambiguous, and the service's 422 says so.
  const ambiguous = await cli([
    'run',
    'x',
    '--datastore',
    `${id}:a`,
    '--datastore',
    `${id}:b`,
    '--query',
    'q=SELECT 1',
  ]);
  expect(ambiguous.code).toBe(1);
  expect(ambiguous.stderr).toMatch(/^error: unprocessable_request: .*\(HTTP 422\)\n$/);

  const deleted = await cli(['datastore', id, '--delete']);
  expect(deleted).toEqual({ code: 0, stdout: `deleted: ${id}\n`, stderr: '' });
  expect(await cli(['datastore', id])).toEqual({
    code: 1,
    stdout: '',
    stderr: 'error: not_found: datastore not found (HTTP 404)\n',
  });
  await expect(agent.datastores.get(id)).rejects.toBeInstanceOf(NotFoundError);
});

test('datastore add --documents; documents --add (.md, .json, .txt), lists them, pages, --delete; the agent searches them', async () => {
  const added = await cli(['datastore', 'add', 'kb', '--documents', '--description', 'the handbook']);
  expect(added.code).toBe(0);
  const id = added.stdout.trim();
  expect(added.stderr).toBe(
    `add documents: agent documents ${id} --add FILE; in a run: agent run --datastore ${id}:kb "..."\n`,
  );
  expect(await cli(['documents', id])).toEqual({ code: 0, stdout: '', stderr: 'no documents\n' });

  const leave = '# Leave\nEmployees get 25 days of paid leave per year.\n';
  const md = await cli(['documents', id, '--add', file('leave.md', leave), '--id', 'leave', '--title', 'Leave policy']);
  expect(md).toEqual({ code: 0, stdout: 'leave\n', stderr: '' });
  const json = await cli([
    'documents',
    id,
    '--add',
    file('oncall.json', JSON.stringify({ team: 'platform', rota: 'weekly' })),
    '--json',
  ]);
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toEqual({
    documents: [expect.objectContaining({ id: expect.stringMatching(/^doc_/), title: 'oncall.json', format: 'json' })],
  });
  const txt = await cli([
    'documents',
    id,
    '--add',
    file('travel.txt', 'Book trains for trips under four hours.'),
    '--id',
    'travel',
  ]);
  expect(txt.stdout).toBe('travel\n');
  const notJson = await cli(['documents', id, '--add', file('broken.json', '{"open": ')]);
  expect(notJson).toMatchObject({ code: 1, stdout: '' });
  expect(notJson.stderr).toMatch(/^error: .*broken\.json is not JSON: /);
  const missing = await cli(['documents', id, '--add', path.join(dir, 'nope.md')]);
  expect(missing).toEqual({
    code: 1,
    stdout: '',
    stderr: `error: cannot read ${path.join(dir, 'nope.md')}: ENOENT: no such file or directory\n`,
  });

  const list = await cli(['documents', id]);
  expect(list).toMatchObject({ code: 0, stderr: '' });
  const oncall = (JSON.parse(json.stdout) as { documents: { id: string }[] }).documents[0].id;
  expect(lines(list.stdout)).toEqual([
    expect.stringMatching(/^DOCUMENT +FORMAT +CHARS +CREATED \(UTC\) +TITLE$/),
    expect.stringMatching(new RegExp(`^${oncall} +json +\\d+ +${TIME} +oncall\\.json$`)),
    expect.stringMatching(new RegExp(`^leave +markdown +${leave.length} +${TIME} +Leave policy$`)),
    expect.stringMatching(new RegExp(`^travel +text +39 +${TIME} +travel\\.txt$`)),
  ]);
  const page = await cli(['documents', id, '--limit', '2']);
  expect(lines(page.stdout)).toHaveLength(3);
  expect(page.stderr).toBe(`more: agent documents ${id} --limit 2 --cursor leave\n`);
  const next = await cli(['documents', id, '--limit', '2', '--cursor', 'leave']);
  expect(
    lines(next.stdout)
      .slice(1)
      .map((l) => l.split(/ +/)[0]),
  ).toEqual(['travel']);
  expect((await cli(['datastore', id])).stderr).toBe(`its documents: agent documents ${id}\n`);
  expect((await cli(['datastore', id])).stdout).toMatch(/^documents +3$/m);

  const search = await cli([
    'run',
    '[[tool name=search_kb args={"query":"paid leave"}]] how much?',
    '--datastore',
    `${id}:kb`,
  ]);
  expect(search.code).toBe(0);
  expect(JSON.parse(search.stdout.trim().replace(/^tool said: /, '')).results[0]).toMatchObject({
    id: 'leave',
    title: 'Leave policy',
  });

  expect(await cli(['documents', id, '--delete', 'leave'])).toEqual({
    code: 0,
    stdout: 'deleted: leave\n',
    stderr: '',
  });
  expect(await cli(['documents', id, '--delete', 'leave'])).toEqual({
    code: 1,
    stdout: '',
    stderr: 'error: not_found: document not found (HTTP 404)\n',
  });
  expect(
    JSON.parse((await cli(['documents', id, '--json'])).stdout).documents.map((d: { id: string }) => d.id),
  ).toEqual([oncall, 'travel']);
  await agent.datastores.delete(id);
});

test("a PostgreSQL URL that cannot be opened: the service's 422 (naming the host), never the URL with its credentials; a taken name is a 409", async () => {
  const url = 'postgres://agent:s3cret-pw@127.0.0.1:9/shop';
  const refused = await cli(['datastore', 'add', 'pg', '--postgres', url]);
  expect(refused).toMatchObject({ code: 1, stdout: '' });
  expect(refused.stderr).toMatch(/^error: unprocessable_request: .+ \(HTTP 422\)\n$/);
  expect(refused.stderr).toMatch(/ECONNREFUSED 127\.0\.0\.1:9/);
  expect(refused.stderr).not.toMatch(/s3cret-pw|agent:/);

  const first = await cli(['datastore', 'add', 'twice', '--documents']);
  expect(first.code).toBe(0);
  const again = await cli(['datastore', 'add', 'twice', '--documents']);
  expect(again).toMatchObject({ code: 1, stdout: '' });
  expect(again.stderr).toMatch(/^error: conflict: .+ \(HTTP 409\)\n$/);
  await agent.datastores.delete(first.stdout.trim());
});
