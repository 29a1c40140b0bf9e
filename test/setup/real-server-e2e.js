// Which e2e files run again on the real Temporal dev server (jest.config.js), by path under test/
// without the .e2e.test.ts ending. test/setup/projects.test.ts checks that each names a file.
/**
 * The e2e files that also run on the real Temporal dev server, each for what it asks of the engine.
 * The others (contract, agentbase-sdk, bad-input, run-modes, api-version, mcp, datastores,
 * final-output, the client's and the launcher's) exercise the gateway, the relay, the tools or the
 * processes: the engine under them does nothing there that these files and the engine project
 * (every workflow and the conformance suite, on both engines) do not already ask of it.
 */
module.exports = [
  'e2e/crash', //             kill -9 of worker and engine mid-run: task redelivery, recovery
  'e2e/restart', //           a stack started again on its data: the engine's persistence
  'e2e/mid-answer', //        a worker killed mid-answer: activity retry and heartbeats
  'e2e/tool-loop', //         cancel and kill -9 during tool activities, timers, parallel activities
  'e2e/drain', //             a graceful stop: tasks handed back and picked up again
  'e2e/terminated', //        runs terminated from outside, the session's watch of a close
  'e2e/history-size', //      history sizes and continue-as-new thresholds
  'e2e/tasks-api', //         listing and filters: the engine's visibility queries
  'e2e/sessions', //          update-with-start, signals and queries across runs of a session
  'e2e/sessions-api', //      session listing (visibility) and delete (termination)
  'e2e/callbacks', //         delivery workflows, their retries and timers across a kill
  'e2e/workflows', //         DAG child workflows
  'e2e/model-outage', //      activity retry policies and backoff
  'e2e/relay-loss', //        events recovered from the engine's history
  'e2e/secrets', //           what the engine's history and files hold
  'e2e/concurrency', //       many runs at once: task matching, account slots
  'e2e/schedules', //         Temporal Schedules
  'e2e/schedules-cron', //    schedules' calendars on a time-skipping server
  'e2e/temporal-cli', //      the real `temporal` CLI on the service's runs
  'e2e/web-ui-codec', //      the Temporal Web UI and the codec endpoint
  'cli/replay', //            histories fetched from the engine, replayed
];
