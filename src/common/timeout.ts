// A promise raced against a timer, for calls whose own timeout is longer than
// the caller can wait (a frozen dependency accepts a call and never answers).
// The call itself goes on; only the wait ends.
export function withTimeout<T>(p: Promise<T>, ms: number, what = 'no answer'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
