// Network for a sandboxed command that is allowed it, through the outbound policy only. The
// command still has a network namespace of its own (loopback alone): it sees no interface of the
// host, so it cannot reach the host's ports (Redis, the engine, the gateway, metrics) or anything
// else by itself. What it gets is the worker's policy proxy (src/common/outbound/proxy.ts) as a
// unix socket bound into the sandbox, and a forwarder that the command's wrapper starts first:
// it listens on 127.0.0.1:3128 inside the sandbox and passes each connection to that socket.
// HTTP_PROXY and HTTPS_PROXY name it, which curl, pip, npm, git and python's urllib follow; the
// proxy resolves and checks every target (docs/computer.md, "Network").
import fs from 'node:fs';
import path from 'node:path';
import type { OutboundPolicy } from '../../../src/common/outbound/policy';
import { startPolicyProxy, type PolicyProxy, type ProxyDecision } from '../../../src/common/outbound/proxy';

/** Where the sandbox sees the proxy's socket and the forwarder. */
export const NETWORK_MOUNT = '/run/agent-network';
/** The forwarder's port on the sandbox's own loopback. */
export const PROXY_PORT = 3128;

const PROXY_URL = `http://127.0.0.1:${PROXY_PORT}`;

/** The variables that send a command's HTTP(S) clients through the forwarder (both spellings: tools read either). */
export const PROXY_ENV: Readonly<Record<string, string>> = {
  HTTP_PROXY: PROXY_URL,
  HTTPS_PROXY: PROXY_URL,
  http_proxy: PROXY_URL,
  https_proxy: PROXY_URL,
  // The command's own servers on the sandbox's loopback are reached directly.
  NO_PROXY: 'localhost,127.0.0.1,::1',
  no_proxy: 'localhost,127.0.0.1,::1',
};

// Plain JavaScript for the machine's node inside the sandbox: no module of ours is visible there.
// It prints "ready" once it listens, which the wrapper waits for before the command starts.
const FORWARDER_SOURCE = `'use strict';
const net = require('net');
const [port, socketPath] = process.argv.slice(2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

// The wrapper: starts the forwarder in the background (a child of the sandbox's init, not of the
// command: a command's own wait never waits for it), waits for its "ready", then becomes the
// command. The forwarder ends with the sandbox's pid namespace when the command ends.
const WRAPPER = [
  `exec 9< <(node ${NETWORK_MOUNT}/forward.js ${PROXY_PORT} ${NETWORK_MOUNT}/proxy.sock </dev/null 2>/dev/null 3>&- 4>&- &)`,
  'read -r ready <&9 || { echo "sandbox: the network forwarder did not start (it needs node in the sandbox)" >&2; exit 125; }',
  'exec 9<&-',
  'exec "$@"',
].join('\n');

/** bwrap's binds of the proxy's socket and the forwarder (read-only: connecting to a socket needs no write). */
export function networkBinds(paths: { socket: string; forwarder: string }): string[] {
  return [
    ...['--ro-bind', paths.socket, `${NETWORK_MOUNT}/proxy.sock`],
    ...['--ro-bind', paths.forwarder, `${NETWORK_MOUNT}/forward.js`],
  ];
}

/** The command line that starts the forwarder, then runs `argv`. */
export function withForwarder(argv: string[]): string[] {
  return ['bash', '-c', WRAPPER, 'agent-network', ...argv];
}

/**
 * The worker's proxy for its sandboxes, started at the first command that asks for network, in
 * the sandbox's private runtime folder (never visible to a command that does not ask).
 */
export class SandboxNetwork {
  private proxy?: Promise<PolicyProxy>;
  /** Whether `proxy` has started (a missing socket then means a cleaner removed the folder). */
  private started = false;

  constructor(
    private readonly policy: OutboundPolicy,
    private readonly onDecision?: (d: ProxyDecision) => void,
  ) {}

  /** The paths to bind into a command's sandbox, the proxy started in `dir` if it is not yet. */
  async paths(dir: string): Promise<{ socket: string; forwarder: string }> {
    const socket = path.join(dir, 'proxy.sock');
    const forwarder = path.join(dir, 'forward.js');
    // Set before any await: commands that start together share one start.
    if (!this.proxy || (this.started && !fs.existsSync(socket))) {
      const starting = this.restart(this.proxy, socket, forwarder);
      this.proxy = starting;
      starting.catch(() => {
        if (this.proxy === starting) this.proxy = undefined; // the next command tries again
      });
    }
    await this.proxy;
    return { socket, forwarder };
  }

  private async restart(old: Promise<PolicyProxy> | undefined, socket: string, forwarder: string) {
    this.started = false;
    await (await old?.catch(() => undefined))?.close();
    fs.writeFileSync(forwarder, FORWARDER_SOURCE, { mode: 0o644 });
    const proxy = await startPolicyProxy(this.policy, socket, { onDecision: this.onDecision });
    this.started = true;
    return proxy;
  }

  async close(): Promise<void> {
    const proxy = await this.proxy?.catch(() => undefined);
    this.proxy = undefined;
    this.started = false;
    await proxy?.close();
  }
}
