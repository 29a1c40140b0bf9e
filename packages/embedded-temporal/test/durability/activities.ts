import { Context } from '@temporalio/activity';

export async function slowEcho(value: string, ms: number): Promise<string> {
  await Context.current().sleep(ms);
  return value;
}

export async function failFirstAttempt(): Promise<number> {
  const attempt = Context.current().info.attempt;
  if (attempt === 1) throw new Error('first attempt fails');
  return attempt;
}
