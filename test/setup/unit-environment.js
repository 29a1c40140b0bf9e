// The unit project's test environment (jest.config.js): Node's, with the unit project's rule held
// for the whole file: no child process, no connection off this machine. A unit test that starts a
// process or reaches out fails here, by name, and belongs in the e2e project (rename it
// *.e2e.test.ts). Loopback stays open: an Express app or a fake provider served in the test's own
// process is still a unit test.
//
// Jest shares Node's built-in modules between the files a worker runs, whatever their project, so
// the guard is put in place when a file's environment is set up and taken out at its teardown,
// which jest runs even when the file fails to load.
const childProcess = require('node:child_process');
const net = require('node:net');
const { TestEnvironment } = require('jest-environment-node');

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);
const PROCESS_CALLS = ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync'];

/** The options object of a Socket#connect call (net.connect and http pass one normalized array), if any. */
function optionsOf(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  return first && typeof first === 'object' ? first : undefined;
}

/** The host a Socket#connect call names, or undefined for a pipe. */
function hostOf(args) {
  const opts = optionsOf(args);
  if (opts) return typeof opts.path === 'string' ? undefined : (opts.host ?? 'localhost');
  if (typeof args[0] === 'string') return undefined; // a pipe's path
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

/**
 * A name the test resolves itself (a `lookup` of its own, as the outbound policy's tests do) is
 * judged by the addresses that lookup gives: each must be loopback.
 */
function loopbackOnly(lookup) {
  return (hostname, options, callback) => {
    const cb = typeof options === 'function' ? options : callback;
    const opts = typeof options === 'function' ? {} : options;
    lookup(hostname, opts, (err, address, family) => {
      const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const off = !err && all.find((a) => a && !LOOPBACK.has(a));
      if (off)
        return cb(
          new Error(
            `a unit test may not connect off this machine (${hostname} is ${off}): make it an e2e test (*.e2e.test.ts)`,
          ),
        );
      return cb(err, address, family);
    });
  };
}

function install() {
  const saved = new Map(PROCESS_CALLS.map((name) => [name, childProcess[name]]));
  for (const name of PROCESS_CALLS) {
    childProcess[name] = () => {
      throw new Error(
        `a unit test may not start a process (child_process.${name}): make it an e2e test (*.e2e.test.ts)`,
      );
    };
  }
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(...args) {
    const host = hostOf(args);
    const opts = optionsOf(args);
    if (host !== undefined && !LOOPBACK.has(host) && opts && typeof opts.lookup === 'function') {
      opts.lookup = loopbackOnly(opts.lookup);
    } else if (host !== undefined && !LOOPBACK.has(host)) {
      throw new Error(`a unit test may not connect off this machine (${host}): make it an e2e test (*.e2e.test.ts)`);
    }
    return connect.apply(this, args);
  };
  return () => {
    for (const [name, fn] of saved) childProcess[name] = fn;
    net.Socket.prototype.connect = connect;
  };
}

class UnitEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    this.restore = install();
  }

  async teardown() {
    this.restore?.();
    await super.teardown();
  }
}

module.exports = UnitEnvironment;
