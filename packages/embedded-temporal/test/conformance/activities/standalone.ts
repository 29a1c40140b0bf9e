// Activities run as standalone activities (StartActivityExecution) by the conformance suite.
import { Context } from '@temporalio/activity';

/** Names what ran it: the attempt, and the workflow (none for a standalone activity). */
export async function echo(text: string): Promise<string> {
  const info = Context.current().info;
  return `${text}:${info.attempt}:${info.workflowExecution?.workflowId ?? 'no workflow'}`;
}

/** Fails its first `failures` attempts. */
export async function flaky(failures: number): Promise<number> {
  const attempt = Context.current().info.attempt;
  if (attempt <= failures) throw new Error(`attempt ${attempt} fails`);
  return attempt;
}

/** Heartbeats until it is cancelled (the heartbeat response tells it). */
export async function untilCancelled(): Promise<void> {
  const ctx = Context.current();
  for (;;) {
    ctx.heartbeat();
    await ctx.sleep(100);
  }
}
