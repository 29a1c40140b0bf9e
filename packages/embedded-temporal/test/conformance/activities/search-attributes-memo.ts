// Activities for search-attributes-memo.engine.test.ts.
import { Context } from '@temporalio/activity';

/** Heartbeats until cancelled, so it stays pending for describe. */
export async function blockUntilCancelled(): Promise<void> {
  for (;;) {
    Context.current().heartbeat('alive');
    await Context.current().sleep(100);
  }
}
