// The `agent` CLI (bin/agent) as a child process, as a user runs it: where the
// service is and the key in its environment, nothing of the test runner's colors.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { KEY_A } from '../e2e/helpers';

export const ROOT = path.resolve(__dirname, '../..');
export const BIN = path.join(ROOT, 'bin/agent');
export const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const lines = (s: string) => s.split('\n').filter(Boolean);

export function userEnv(gatewayUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_URL: gatewayUrl, AGENT_API_KEY: KEY_A, ...extra };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return env;
}

/** Runs `agent <args>` against the service at `gatewayUrl()`; `onStdout` sees the output as it grows. */
export function cliRunner(gatewayUrl: () => string) {
  return (args: string[], extra: NodeJS.ProcessEnv = {}, onStdout?: (text: string) => void): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(BIN, args, { cwd: ROOT, env: userEnv(gatewayUrl(), extra) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
        onStdout?.(stdout);
      });
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
}
