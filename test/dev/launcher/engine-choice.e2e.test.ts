// The engine `npm start` runs when ENGINE is not set: the official dev server
// with its Web UI (payloads readable through the gateway's codec endpoint),
// except over a data folder of the embedded engine's runs, which resume there.
// ENGINE set decides alone. The last test runs `npm start` as a new user does.
import { spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chooseStartEngine } from '../../../src/dev/launcher/engine-choice';
import { freePort, ROOT } from '../../../src/dev/launcher/processes';
import { waitUntil } from '../../support/wait-until';
import { TS_LOADER_ARGS } from '../../../src/common/ts-loader';

jest.setTimeout(180_000);
const dirs: string[] = [];
const dataDir = (...files: string[]) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-choice-'));
  for (const f of files) fs.writeFileSync(path.join(d, f), '');
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const quiet = () => undefined;

test('ENGINE decides when set, whatever the data folder holds', () => {
  expect(chooseStartEngine({ ENGINE: 'embedded' }, dataDir(), quiet)).toEqual({ engine: 'embedded' });
  expect(chooseStartEngine({ ENGINE: 'temporal-cli' }, dataDir('temporal.db'), quiet)).toEqual({
    engine: 'temporal-cli',
  });
});

test("unset: the official dev server; over the embedded engine's data alone, the embedded engine, saying why", () => {
  expect(chooseStartEngine({}, dataDir(), quiet)).toEqual({ engine: 'temporal-cli' });
  expect(chooseStartEngine({}, dataDir('temporal.db', 'temporal-cli.sqlite'), quiet)).toEqual({
    engine: 'temporal-cli',
  });
  const resumed = chooseStartEngine({}, dataDir('temporal.db'), quiet);
  expect(resumed.engine).toBe('embedded');
  expect(resumed.note).toMatch(/holds the embedded engine's runs, so they resume there \(ENGINE=temporal-cli starts/);
});

test('npm start with no ENGINE: the dev server, its Web UI wired to the codec endpoint, said in the banner', async () => {
  const [port, temporalPort, uiPort, mcpPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir(),
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    DEMO_MCP_PORT: String(mcpPort),
    DEMO_WEB_PORT: String(await freePort()),
    NO_COLOR: '1',
  };
  for (const k of [
    'ENGINE',
    'API_KEYS',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'TEMPORAL_ADDRESS',
    'REDIS_URL',
    'CODEC_AUTH_TOKEN',
    'CODEC_CORS_ORIGINS',
    'WORKER_METRICS_PORT',
  ])
    delete env[k];
  let out = '';
  const proc: ChildProcess = spawn(process.execPath, [...TS_LOADER_ARGS, path.join(ROOT, 'src/dev/launcher/main.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    // The banner, to its Web UI line with the codec token (it may come in more than one write).
    await waitUntil(
      'the ready banner, to its Web UI line',
      () =>
        out.includes('Agent Execution Service ready') &&
        /Web UI: .*\n/.test(out) &&
        /--codec-auth "Bearer [^"]+"/.test(out),
      {
        timeoutMs: 120_000,
        giveUpIf: () => (proc.exitCode !== null ? `npm start exited (${proc.exitCode})` : undefined),
      },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\noutput:\n${out.slice(-3000)}`);
    });
    expect(out).toContain('ENGINE=temporal-cli, the official Temporal dev server');
    expect(out).toContain(`Web UI: http://127.0.0.1:${uiPort} (payloads readable`);
    const token = /--codec-auth "Bearer ([^"]+)"/.exec(out)?.[1];
    expect(token).toBeDefined();
    const settings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as {
      Codec: { Endpoint: string };
    };
    expect(settings.Codec.Endpoint).toBe(`http://127.0.0.1:${port}/codec/${token}`);
  } finally {
    proc.kill('SIGINT');
    await new Promise((r) => proc.once('exit', r));
  }
});
