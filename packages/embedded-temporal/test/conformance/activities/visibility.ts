// Activities of visibility.engine.test.ts.

export async function tag(value: string): Promise<string> {
  return `tagged:${value}`;
}
