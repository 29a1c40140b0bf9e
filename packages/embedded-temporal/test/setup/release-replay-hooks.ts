// A copy of the repository's test/setup/release-replay-hooks.ts, for the package's own jest runs
// (jest.config.js); keep the two alike. (A module, by its export below: the two files share one
// type-check, where two scripts would declare VM_SHARED twice.)
//
// Runs after every test file (setupFilesAfterEnv in jest.config.js).
//
// Worker.runReplayHistory runs workflows in debug mode, that is in this thread,
// and the SDK then installs process-wide hooks it never removes: a V8 promise
// hook and an Error.prepareStackTrace override (vm-shared's globalHandlers; the
// SDK expects them in a worker thread that dies with the Worker). The hooks'
// closures belong to the test file's own copy of @temporalio/worker, so they kept
// that whole module graph (bundles, source maps, SDK, client) reachable after
// the file was done: a jest worker grew by ~50 MB per replaying file, and tearing
// down that heap when jest ended the worker took long enough for jest to report
// "A worker process has failed to exit gracefully". This removes the hooks once
// the file's tests are done.
//
// Only files that already loaded the module are touched: require.cache looks it
// up in this file's module registry without loading it.

const VM_SHARED = require.resolve('@temporalio/worker/lib/workflow/vm-shared');

afterAll(() => {
  const loaded = require.cache[VM_SHARED]?.exports as
    typeof import('@temporalio/worker/lib/workflow/vm-shared') | undefined;
  if (loaded?.globalHandlers.installed) loaded.globalHandlers.uninstall();
});

export {};
