// Activities of errors-fuzz.engine.test.ts.

export async function echoActivity(value: string): Promise<string> {
  return value;
}

/** Never run by a worker: the test polls and answers this activity's tasks itself. */
export async function handActivity(): Promise<string> {
  return 'by hand';
}
