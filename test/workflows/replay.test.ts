// Every saved history of the service's workflows must replay against the
// current workflow code: a change that breaks determinism for runs already in
// flight fails here. Refresh with `UPDATE_HISTORIES=1 npx jest test/workflows`.
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from './env';

// One folder per generation of workflow code; runs of every generation may still be in flight.
const dir = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();

test('saved histories exist', () => {
  expect(files.length).toBeGreaterThanOrEqual(15);
});

test.each(files)('%s replays cleanly', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, file);
});
