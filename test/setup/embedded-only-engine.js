/**
 * The engine files (`*.engine.test.ts`) that run on the embedded engine only: the engine project
 * runs every other one on the real Temporal dev server too (the whole conformance suite, and the
 * service's workflows whose runs lean on what an engine does: sessions and their turns, account
 * slots, callbacks, DAGs and their replay, continue-as-new, schedules' runs as children).
 *
 * Each file below tests a workflow's own decisions over plain activities, timers and
 * cancellation, which the conformance suite checks on both engines; nothing in it asks the engine
 * for more. Measured: these four cost 45 s of the real-server pass's ~225 worker-seconds of
 * workflow tests (CI10), for the 15-minute suite.
 */
module.exports = [
  'test/workflows/task-input', //   both input shapes issue the same commands: the workflow's code, not the engine's
  'test/workflows/final-output', // one more model call and its repairs: activities only
  'test/workflows/tool-servers', // MCP tools as activities, handoffs in the thread: activities and a session signal
  'test/workflows/max-duration', // a timer that cancels what is in flight: the conformance suite's timer and cancel cases
];
