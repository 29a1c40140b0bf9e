// Activities used by the conformance suite.
import { Context, CancelledFailure } from '@temporalio/activity';

export async function greet(name: string): Promise<string> {
  return `hello ${name}`;
}

export async function failUntil(attempts: number): Promise<number> {
  const attempt = Context.current().info.attempt;
  if (attempt <= attempts) throw new Error(`attempt ${attempt} fails`);
  return attempt;
}

export async function waitForCancel(): Promise<void> {
  for (;;) {
    Context.current().heartbeat();
    try {
      await Context.current().sleep(100);
    } catch (err) {
      if (err instanceof CancelledFailure) throw err;
      throw err;
    }
  }
}

export async function heartbeatOnceThenStall(): Promise<string> {
  const info = Context.current().info;
  if (info.attempt === 1) {
    Context.current().heartbeat('progress');
    await new Promise((r) => setTimeout(r, 3000));
    return 'stalled';
  }
  return `resumed:${String(info.heartbeatDetails)}`;
}
