// Writes durations.json (what sequencer.js orders a clean clone's run by) from a jest JSON
// report: `npx jest --json --outputFile=report.json`, then `node test/setup/durations.js report.json`.
// Only the slow files matter to the order; files under 5 s are left out to keep the record short.
// Keyed by path (jest's report does not name the project): a file run on both engines keeps its
// longer time.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const report = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = {};
for (const r of report.testResults) {
  const seconds = Math.round((r.endTime - r.startTime) / 100) / 10;
  const file = path.relative(ROOT, r.name);
  if (seconds >= 5) out[file] = Math.max(out[file] ?? 0, seconds);
}
const sorted = Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
fs.writeFileSync(path.join(__dirname, 'durations.json'), JSON.stringify(sorted, null, 1) + '\n');
console.log(`${Object.keys(sorted).length} files of ${report.testResults.length} recorded`);
