// The worker's side of the sandbox's spawner (spawner-process.js says why it exists): starts the
// helper on the first command, hands it each command, and turns its answers into a started
// command's handle. A helper that dies fails the commands it was running (bwrap's
// --die-with-parent ends them with it) and the next command starts a new one.
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const HELPER = path.join(__dirname, 'spawner-process.js');

export interface SpawnRequest {
  argv: string[];
  env: Record<string, string>;
  /** Named fifos the command writes its stdout and stderr to (the caller reads them). */
  stdout: string;
  stderr: string;
  channel?: { input: string; max: number };
}

export interface SpawnExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What bwrap wrote on its status fd. */
  status: string;
  /** What the command wrote on the channel's fd 4. */
  channel: Buffer;
}

export interface Spawned {
  exited: Promise<SpawnExit>;
  kill(): void;
}

interface Pending {
  /** The helper the command went to: its end fails only its own commands. */
  helper: ChildProcess;
  started(): void;
  failed(err: Error): void;
  exited(exit: SpawnExit): void;
}

interface Answer {
  id: number;
  pid?: number;
  error?: string;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  status?: string;
  channel?: string;
}

export class Spawner {
  private helper?: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** Starts `req` through the helper; resolves once the command runs, rejects if it could not start. */
  spawn(req: SpawnRequest): Promise<Spawned> {
    const helper = this.running();
    const id = ++this.nextId;
    return new Promise<Spawned>((resolve, reject) => {
      let exited!: (exit: SpawnExit) => void;
      let failedLater!: (err: Error) => void;
      const exit = new Promise<SpawnExit>((res, rej) => ((exited = res), (failedLater = rej)));
      let started = false;
      this.pending.set(id, {
        helper,
        started: () => {
          started = true;
          resolve({ exited: exit, kill: () => this.send({ kill: id }) });
        },
        failed: (err) => {
          this.settled(id);
          if (started) failedLater(err);
          else reject(err);
        },
        exited: (e) => {
          this.settled(id);
          exited(e);
        },
      });
      this.holdOpen();
      helper.stdin!.write(`${JSON.stringify({ id, ...req })}\n`);
    });
  }

  /** Ends the helper (commands still running end with it). */
  close(): void {
    this.helper?.stdin?.end();
    this.helper = undefined;
  }

  private settled(id: number): void {
    this.pending.delete(id);
    this.holdOpen();
  }

  /** The helper keeps this process running only while a command does (a test's, a bench's). */
  private holdOpen(): void {
    const h = this.helper;
    if (!h) return;
    const busy = this.pending.size > 0;
    for (const handle of [h, h.stdin, h.stdout] as unknown as Array<{ ref(): void; unref(): void } | null>)
      if (busy) handle?.ref();
      else handle?.unref();
  }

  private send(message: object): void {
    this.helper?.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  private running(): ChildProcess {
    if (this.helper) return this.helper;
    const helper = spawn(process.execPath, [HELPER], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    this.helper = helper;
    helper.stdin!.on('error', () => undefined); // its end is reported by 'exit'
    readline.createInterface({ input: helper.stdout! }).on('line', (line) => this.answer(JSON.parse(line) as Answer));
    const gone = (why: string) => {
      if (this.helper === helper) this.helper = undefined;
      const err = new Error(`the sandbox's spawner ${why}`);
      for (const p of [...this.pending.values()]) if (p.helper === helper) p.failed(err);
    };
    helper.once('error', (err) => gone(`could not start: ${err.message}`));
    helper.once('exit', (code, signal) => gone(`exited (${signal ?? code})`));
    this.holdOpen();
    return helper;
  }

  private answer(a: Answer): void {
    const p = this.pending.get(a.id);
    if (!p) return;
    if (a.error !== undefined) p.failed(new Error(a.error));
    else if (a.pid !== undefined) p.started();
    else if (a.exit)
      p.exited({
        ...a.exit,
        status: a.status ?? '',
        channel: Buffer.from(a.channel ?? '', 'base64'),
      });
  }
}
