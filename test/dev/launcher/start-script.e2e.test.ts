// scripts/start.sh on a fresh clone says what it installs before the silent
// minute of `npm install`, and does not install again once packages are there.
// Run in a scratch copy with the installer and node stubbed (no real install).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../../src/dev/launcher/processes';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'start-script-'));
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.copyFileSync(path.join(ROOT, 'scripts/start.sh'), path.join(dir, 'scripts/start.sh'));
  fs.writeFileSync(path.join(dir, 'scripts/install-deps.sh'), 'mkdir -p node_modules\necho "(npm install ran)"\n');
  fs.writeFileSync(path.join(dir, 'bin/node'), '#!/bin/sh\necho "(the launcher started)"\n', { mode: 0o755 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const start = () =>
  spawnSync('bash', [path.join(dir, 'scripts/start.sh')], {
    env: { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}` },
    encoding: 'utf8',
  });

test('a first start says it installs the npm packages, then installs them and starts', () => {
  const r = start();
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(
    'npm start: first start: installing the npm packages (about a minute)...\n(npm install ran)\n(the launcher started)\n',
  );
});

test('a later start installs nothing and says nothing of it', () => {
  const r = start();
  expect(r.stdout).toBe('(the launcher started)\n');
});
