// The built-in tools that run as activities (workflows/tool-registry.ts lists
// them; `wait` is a timer in the workflow). Each takes the parsed arguments and
// returns the text the model reads, or throws ToolInputError.

export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
}

export type ToolImpl = (args: Record<string, unknown>) => string | Promise<string>;

export const BUILTIN_IMPLS: Readonly<Record<string, ToolImpl>> = {
  current_time: ({ time_zone }) => {
    const now = new Date();
    if (time_zone === undefined) return JSON.stringify({ utc: now.toISOString() });
    if (typeof time_zone !== 'string') throw new ToolInputError('time_zone must be a string');
    let local: string;
    try {
      local = now.toLocaleString('sv-SE', { timeZone: time_zone, hour12: false }).replace(' ', 'T');
    } catch {
      throw new ToolInputError(`unknown time zone: ${time_zone}`);
    }
    return JSON.stringify({ utc: now.toISOString(), [time_zone]: local });
  },
  calculate: ({ expression }) => {
    if (typeof expression !== 'string' || !expression.trim())
      throw new ToolInputError('expression must be a non-empty string');
    return String(evaluate(expression));
  },
};

/** Arithmetic on numbers: + - * / % ^ (right-associative), unary minus, parentheses. No names, no calls. */
export function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+|[-+*/%^()]|\S/gi) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = (t?: string) => {
    const got = tokens[i++];
    if (t !== undefined && got !== t)
      throw new ToolInputError(`expected ${t} at token ${i}, found ${got ?? 'the end'}`);
    return got;
  };
  const primary = (): number => {
    const t = take();
    if (t === '(') {
      const v = sum();
      take(')');
      return v;
    }
    if (t === '-') return -power();
    if (t === '+') return power();
    if (t !== undefined && /^[\d.]/.test(t)) return Number(t);
    throw new ToolInputError(`unexpected ${t === undefined ? 'end of expression' : JSON.stringify(t)}`);
  };
  const power = (): number => {
    const base = primary();
    if (peek() !== '^') return base;
    take();
    return base ** power();
  };
  const product = (): number => {
    let v = power();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = take();
      const r = power();
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = take() === '+' ? v + product() : v - product();
    return v;
  };
  const value = sum();
  if (i < tokens.length) throw new ToolInputError(`unexpected ${JSON.stringify(tokens[i])}`);
  if (!Number.isFinite(value)) throw new ToolInputError('the result is not a finite number');
  return value;
}
