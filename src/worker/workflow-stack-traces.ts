// How deep the stack traces of the worker's workflow thread are. The SDK
// captures a stack trace for every promise a workflow makes (a promise hook,
// always on: it serves the Web UI's Stack Trace tab), and maps each frame
// through the bundle's source map. A one-turn task makes about 140 promises
// across its run and the account's slots; with Node's default of 10 frames that
// capture cost the worker about 3.5 ms of CPU per task, at 5 frames about 2
// (docs/design.md, "The cost of a run"). V8 gives every context its limit when
// the context is made, so this must run before the worker makes its workflow
// thread; the main thread's own limit, made at start, stays as it was.
import v8 from 'node:v8';

export function workflowStackTraceLimit(frames: number): void {
  v8.setFlagsFromString(`--stack-trace-limit=${frames}`);
}
