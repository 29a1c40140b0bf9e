// Walking a failure's causes: activity and child-workflow failures wrap the failure that says
// what went wrong (an ApplicationFailure's type, message and details). Pure code: bundled into the
// workflow sandbox, and used by the gateway too.

/** What the walk reads of each failure of a chain. */
export interface FailureLike {
  message?: string;
  type?: string;
  details?: unknown[];
  cause?: unknown;
}

/** The failure and each of its causes, outermost first. */
export function* causeChain(err: unknown): Generator<FailureLike> {
  for (let e = err as FailureLike | undefined; e; e = e.cause as FailureLike | undefined) yield e;
}

/** The innermost failure of the chain that still has a message (the one that says what went wrong). */
export function innermostFailure(err: unknown): FailureLike | undefined {
  let e = err as FailureLike | undefined;
  while (e?.cause && (e.cause as FailureLike).message) e = e.cause as FailureLike;
  return e;
}
