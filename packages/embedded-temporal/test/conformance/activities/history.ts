export async function slowAdd(a: number, b: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 300));
  return a + b;
}
