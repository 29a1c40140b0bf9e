// Where the repository's TypeScript loader is (bin/register-ts.js), for the processes and threads
// the service starts from .ts entry points.
import path from 'node:path';

export const TS_LOADER = path.resolve(__dirname, '..', '..', 'bin', 'register-ts.js');

/** The node arguments that load .ts files. */
export const TS_LOADER_ARGS: readonly string[] = ['-r', TS_LOADER];

/** Whether these node arguments already load .ts files (a thread inherits its process's). */
export function loadsTypeScript(execArgv: readonly string[]): boolean {
  return execArgv.some((a) => a.includes('register-ts'));
}
