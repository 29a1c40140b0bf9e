// Writes openapi/openapi.json from buildOpenApi() (src/gateway/openapi/document.ts).
// `--check` writes nothing and fails when the file is stale, for CI steps
// that should not rely on the jest test (which checks the same).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { renderOpenApi } from '../src/gateway/openapi/document';

const OPENAPI_FILE = join(__dirname, '..', 'openapi', 'openapi.json');

function main(): void {
  const text = renderOpenApi();
  const shown = relative(process.cwd(), OPENAPI_FILE);
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OPENAPI_FILE, 'utf8');
    } catch {
      // A missing file is as stale as a wrong one.
    }
    if (current !== text) {
      console.error(`${shown} is stale; run: npx tsx scripts/generate-openapi.ts`);
      process.exit(1);
    }
    console.log(`${shown} is up to date`);
    return;
  }
  mkdirSync(dirname(OPENAPI_FILE), { recursive: true });
  writeFileSync(OPENAPI_FILE, text);
  console.log(`wrote ${shown} (${text.length} bytes)`);
}

main();
