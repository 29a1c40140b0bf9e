// Shared by the bad-input conformance files (errors.engine.test.ts: each mistake's status;
// errors-fuzz.engine.test.ts: calls out of order and the seeded fuzz): raw WorkflowService calls
// and the check of the status they get.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { Env, uid } from './harness';
import { CallOutcome, codeName, detailType } from './fuzz-tools';

export const json = (v: unknown) => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(v)),
});
export const secs = (n: number) => ({ seconds: Long.fromNumber(n) });

export function expectStatus(o: CallOutcome, code: number, message?: RegExp, detail?: string): void {
  expect(`${codeName(o.code)}: ${o.details}`).toMatch(new RegExp(`^${codeName(code)}: `));
  if (message) expect(o.details).toMatch(message);
  if (detail) expect(detailType(o)).toBe(detail);
}

/** Raw calls on the env `getEnv` returns (set up in a beforeAll). */
export function rawCalls(getEnv: () => Env) {
  const ws = () => getEnv().connection.workflowService;
  const ns = () => getEnv().namespace;
  /** A start request that is valid except for what `patch` breaks. */
  const start = (patch: Record<string, unknown>) =>
    ws().startWorkflowExecution({
      namespace: ns(),
      workflowId: uid('bad-start'),
      workflowType: { name: 'echo' },
      taskQueue: { name: `tq-never-polled-${randomUUID()}` },
      requestId: randomUUID(),
      ...patch,
    } as any);
  return { ws, ns, start };
}
