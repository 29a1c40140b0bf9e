// Activities for the limits tests.
export async function sized(n: number): Promise<string> {
  return 'a'.repeat(n);
}
