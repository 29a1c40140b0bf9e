// The sandbox's spawner: a small process the worker starts once, which starts each sandboxed
// command for it. Starting a process forks the one that starts it, and a fork costs in proportion
// to the forking process's memory: the worker holds a gigabyte and more after a while (its heap,
// the Temporal core, cached workflows), this process some 40 MB, so a command starts sooner from
// here (docs/computer.md, "Cost"). Plain JavaScript, Node's own modules only: nothing to load.
//
// Lines of JSON on stdin, one per request:
//   {"id":1,"argv":[...],"env":{...},"stdout":"<fifo>","stderr":"<fifo>","channel":{"input":"..","max":N}}
//   {"kill":1}
// and on stdout, per command: {"id":1,"pid":N} once started (or {"id":1,"error":".."}), then
//   {"id":1,"exit":{"code":N|null,"signal":".."|null},"status":"..","channel":"<base64>"}.
// The command's fds: 0 nothing, 1 and 2 the named fifos (the worker reads them), 3 the channel's
// input, 4 its output, 5 bwrap's JSON status. The worker ending (its end of stdin closes) kills
// every command still running, and this process ends.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const readline = require('node:readline');

/** How long the status and channel pipes get to end after a command exited. */
const DRAIN_MS = 5000;
/** Bytes kept of bwrap's status (two short JSON objects). */
const STATUS_MAX = 4096;

const children = new Map();

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Collects a pipe's bytes, at most `max`; `done` once it ends. */
function collect(stream, max) {
  const chunks = [];
  let size = 0;
  if (!stream) return { bytes: () => Buffer.alloc(0), done: Promise.resolve() };
  stream.on('data', (d) => {
    if (size < max) chunks.push(d.subarray(0, max - size));
    size += d.length;
  });
  const done = new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  return { bytes: () => Buffer.concat(chunks), done };
}

function within(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

/**
 * Opens a fifo the worker reads for the command to write: read-write, so that the open never
 * waits (Linux); the worker holds the read end open until it has this command's pid.
 */
function openOutput(file) {
  return fs.openSync(file, fs.constants.O_RDWR);
}

function start(req) {
  let out;
  let err;
  let child;
  try {
    out = openOutput(req.stdout);
    err = openOutput(req.stderr);
    const ch = req.channel;
    child = spawn(req.argv[0], req.argv.slice(1), {
      stdio: ['ignore', out, err, ch ? 'pipe' : 'ignore', ch ? 'pipe' : 'ignore', 'pipe'],
      env: req.env,
    });
  } catch (e) {
    send({ id: req.id, error: e.message });
    return;
  } finally {
    // The command holds them now; ours would keep the worker's streams from ending.
    if (out !== undefined) fs.closeSync(out);
    if (err !== undefined) fs.closeSync(err);
  }
  const status = collect(child.stdio[5], STATUS_MAX);
  const channel = collect(req.channel ? child.stdio[4] : null, req.channel ? req.channel.max : 0);
  if (req.channel) {
    child.stdio[3].on('error', () => undefined); // the command need not read it
    child.stdio[3].end(req.channel.input);
  }
  children.set(req.id, child);
  let spawned = false;
  child.once('spawn', () => {
    spawned = true;
    send({ id: req.id, pid: child.pid });
  });
  // Not started (bash missing, say): the only message after the request. Later errors (a kill of
  // a process already gone) change nothing: its exit is reported.
  child.on('error', (e) => {
    if (spawned) return;
    children.delete(req.id);
    send({ id: req.id, error: e.message });
  });
  child.once('exit', async (code, signal) => {
    if (!spawned) return;
    await within(Promise.all([status.done, channel.done]), DRAIN_MS);
    children.delete(req.id);
    send({
      id: req.id,
      exit: { code, signal },
      status: status.bytes().toString('utf8'),
      ...(req.channel ? { channel: channel.bytes().toString('base64') } : {}),
    });
  });
}

function handle(line) {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  if (typeof req.kill === 'number') children.get(req.kill)?.kill('SIGKILL');
  else start(req);
}

readline.createInterface({ input: process.stdin }).on('line', handle);
process.stdin.once('end', () => {
  for (const child of children.values()) child.kill('SIGKILL');
  process.exit(0);
});
// The worker reads stdout; if it is gone, so is the reason to run.
process.stdout.on('error', () => process.exit(0));
