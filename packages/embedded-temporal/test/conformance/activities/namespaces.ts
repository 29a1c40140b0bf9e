// Activities of namespaces.engine.test.ts.
import { Context } from '@temporalio/activity';

export async function activityNamespace(): Promise<string> {
  return Context.current().info.workflowNamespace ?? 'unknown';
}
