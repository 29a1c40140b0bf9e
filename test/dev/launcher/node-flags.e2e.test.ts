// The gateway's Node flags (src/dev/launcher/node-flags.ts) reach every way of
// starting it, and startNode hands node its own arguments.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { GATEWAY_NODE_FLAGS } from '../../../src/dev/launcher/node-flags';
import { startNode, waitFor, Child } from '../../../src/dev/launcher/processes';

const ROOT = path.join(__dirname, '../../..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

/** The arguments of a command given to node, before the entry point's own. */
function nodeArgsOf(argv: string[]): string[] {
  expect(argv[0]).toBe('node');
  return argv.slice(1, argv.indexOf('-r'));
}

test('there are gateway flags to check', () => {
  expect(GATEWAY_NODE_FLAGS.length).toBeGreaterThan(0);
});

test('npm run gateway starts node with the gateway flags', () => {
  const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.gateway;
  expect(script).toMatch(/src\/gateway\/main\.ts$/);
  expect(nodeArgsOf(script.split(/\s+/))).toEqual([...GATEWAY_NODE_FLAGS]);
});

test("the image's default command and the compose gateway start node with the gateway flags", () => {
  const cmd = /^CMD (\[.*\])$/m.exec(read('temporal-docker/Dockerfile'));
  expect(cmd).not.toBeNull();
  const imageCmd = JSON.parse(cmd![1]) as string[];
  expect(imageCmd).toContain('src/gateway/main.ts');
  expect(nodeArgsOf(imageCmd)).toEqual([...GATEWAY_NODE_FLAGS]);
  const compose = YAML.parse(read('temporal-docker/docker-compose.yml')) as {
    services: Record<string, { command?: string[] }>;
  };
  expect(nodeArgsOf(compose.services.gateway.command!)).toEqual([...GATEWAY_NODE_FLAGS]);
});

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

test('startNode gives node the nodeArgs (as npm start does for the gateway)', async () => {
  child = startNode('flags', 'test/dev/launcher/fixtures/idle.ts', [], { nodeArgs: GATEWAY_NODE_FLAGS });
  await waitFor('flags', child, () => child!.isReady(), 30_000);
  const cmdline = fs.readFileSync(`/proc/${child.proc.pid}/cmdline`, 'utf8').split('\0');
  expect(cmdline.slice(1, 1 + GATEWAY_NODE_FLAGS.length)).toEqual([...GATEWAY_NODE_FLAGS]);
});
