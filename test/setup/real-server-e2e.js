// Which e2e files run again on the real Temporal dev server (jest.config.js), by path under test/
// without the .e2e.test.ts ending. test/setup/projects.test.ts checks that each names a file.
/**
 * The e2e files that also run on the real Temporal dev server: each asks something of the engine,
 * end to end, that the engine project (every workflow with its activities faked, and the
 * conformance suite, both on both engines) does not: the engine process itself killed or started
 * again on its data, what its history and files hold, its visibility queries, update-with-start,
 * Temporal Schedules, and the tools people point at a real server (the `temporal` CLI, the Web UI's
 * codec, the replay CLI).
 *
 * Left to the embedded engine's pass, each with where the real server still meets what it asks:
 * contract, agentbase-sdk, bad-input, run-modes, api-version, mcp, datastores, session-files,
 * final-output, the client's, the launcher's and telemetry's files (the gateway, the relay, the tools, the processes:
 * the engine under them does nothing the files below do not do); mid-answer and tool-loop (a
 * worker killed mid-activity: crash below, and the conformance suite's heartbeat, retry and
 * cancellation cases); computer (the same for a worker killed mid-command; the computer's calls in
 * the workflow: computer-tools.engine, on both engines); callbacks (callbacks.engine: delivery, retries, 410, order); workflows (the
 * DAG: dag.engine and dag-replay.engine); model-outage (activity retry policies: the conformance
 * suite's activities cases); concurrency (account slots: account-slots.engine); terminated
 * (termination: sessions-api below, the conformance suite's lifecycle cases). Measured in a
 * loaded run: those seven cost 285 of the pass's 785 worker-seconds.
 */
module.exports = [
  'e2e/crash', //             kill -9 of worker and engine mid-run: task redelivery, recovery
  'e2e/restart', //           a stack started again on its data: the engine's persistence
  'e2e/approvals-crash', //   a call waiting for a decision across kill -9 of every process
  'e2e/rewind', //            the engine's reset of a running and of a finished run
  'e2e/drain', //             a graceful stop: tasks handed back and picked up again (sticky queues)
  'e2e/history-size', //      history sizes and continue-as-new thresholds
  'e2e/tasks-api', //         listing and filters: the engine's visibility queries
  'e2e/sessions', //          update-with-start, signals and queries across runs of a session
  'e2e/sessions-api', //      session listing (visibility) and delete (termination)
  'e2e/lazy-sessions', //     sessions opened lazily: OR / IS NOT NULL listing, queries of closed runs
  'e2e/relay-loss', //        events recovered from the engine's history
  'e2e/secrets', //           what the engine's history and files hold
  'e2e/schedules', //         Temporal Schedules
  'e2e/schedules-cron', //    schedules' calendars on a time-skipping server
  'e2e/temporal-cli', //      the real `temporal` CLI on the service's runs
  'e2e/web-ui-codec', //      the Temporal Web UI and the codec endpoint
  'cli/replay', //            histories fetched from the engine, replayed
];
