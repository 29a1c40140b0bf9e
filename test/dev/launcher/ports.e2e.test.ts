// `npm start` with a port it needs already taken: one line naming the port and
// the variable that moves it, exit 1, and nothing started or written.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from '../../../src/dev/launcher/processes';
import { portProblem, wantedPorts } from '../../../src/dev/launcher/ports';
import { TS_LOADER_ARGS } from '../../../src/common/ts-loader';

let holder: net.Server;
let taken: number;

beforeAll(async () => {
  holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  taken = (holder.address() as net.AddressInfo).port;
});
afterAll(() => new Promise((resolve) => holder.close(resolve)));

test('the ports npm start needs follow the environment', () => {
  const names = (env: NodeJS.ProcessEnv) => wantedPorts(env).map((p) => `${p.variable}=${p.port}`);
  expect(names({})).toEqual([
    'PORT=8080',
    'TEMPORAL_PORT=7233',
    'DEMO_MCP_PORT=8790',
    'DEMO_WEB_PORT=8791',
    'WORKER_METRICS_PORT=9464',
  ]);
  expect(names({ ENGINE: 'temporal-cli', TEMPORAL_UI_PORT: '9233' })).toEqual([
    'PORT=8080',
    'TEMPORAL_PORT=7233',
    'TEMPORAL_UI_PORT=9233',
    'DEMO_MCP_PORT=8790',
    'DEMO_WEB_PORT=8791',
    'WORKER_METRICS_PORT=9464',
  ]);
  // A server named by TEMPORAL_ADDRESS is not started here; the demo servers and the worker's metrics can be turned off.
  const off = { TEMPORAL_ADDRESS: 'temporal:7233', DEMO_MCP: 'false', DEMO_WEB: 'false' };
  expect(names({ ...off, WORKER_METRICS_PORT: '0', PORT: '9000' })).toEqual(['PORT=9000']);
  expect(names({ ...off, DEMO_WEB_PORT: '9791', DEMO_WEB: undefined })).toContain('DEMO_WEB_PORT=9791');
  expect(names({ ...off, WORKER_METRICS_PORT: '9100' })).toEqual(['PORT=8080', 'WORKER_METRICS_PORT=9100']);
});

test('portProblem tells a taken port from a free one', async () => {
  expect(await portProblem({ port: taken, host: '127.0.0.1' })).toBe('is in use');
  expect(await portProblem({ port: await freePort(), host: '127.0.0.1' })).toBeUndefined();
});

describe.each(['PORT', 'TEMPORAL_PORT', 'DEMO_MCP_PORT', 'DEMO_WEB_PORT', 'WORKER_METRICS_PORT'])(
  'npm start with %s taken',
  (variable) => {
    test('exits 1 with one line naming the port and the variable, having started and written nothing', async () => {
      const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ports-')), 'data');
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        TEMPORAL_PORT: String(await freePort()),
        DEMO_MCP_PORT: String(await freePort()),
        DEMO_WEB_PORT: String(await freePort()),
        WORKER_METRICS_PORT: String(await freePort()),
        ENGINE: 'embedded',
      };
      delete env.TEMPORAL_ADDRESS;
      env[variable] = String(taken);
      const r = spawnSync(process.execPath, [...TS_LOADER_ARGS, path.join(ROOT, 'src/dev/launcher/main.ts')], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^npm start: port ${taken} \\(.+, ${variable}\\) is in use: stop what uses it, or set ${variable} to a free port$`,
          ),
        ),
      ]);
      expect(r.stdout).toBe('');
      expect(fs.existsSync(dataDir)).toBe(false);
    });
  },
);
