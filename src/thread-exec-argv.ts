// How a worker thread loads a TypeScript entry point: through tsx, as the
// process itself does; under a test runner whose transform does not reach
// threads, tsx is added.
export function threadExecArgv(entry: string): string[] | undefined {
  const hasTsx = process.execArgv.some((a) => a.includes('tsx'));
  return entry.endsWith('.ts') && !hasTsx ? [...process.execArgv, '-r', require.resolve('tsx/cjs')] : undefined;
}
