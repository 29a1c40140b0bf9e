// Pins a released API version: writes openapi/versions/<version>.json, the
// document as it is when the version is released (a new entry of
// src/common/api-versions.ts), and never writes that file again. Later code is held
// to it: test/gateway/api-version-shapes.test.ts compares every later document
// with it (nothing a client of the version relies on may change), and
// test/e2e/api-version.e2e.test.ts checks the service's real answers against it.
//   npx tsx scripts/pin-api-version.ts 2026-11-28
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isApiVersion, LATEST_VERSION } from '../src/common/api-versions';
import { renderOpenApi } from '../src/gateway/openapi/document';

export const pinnedFile = (version: string) => join(__dirname, '..', 'openapi', 'versions', `${version}.json`);

function main(): void {
  const version = process.argv[2];
  if (!version || !isApiVersion(version))
    throw new Error(`usage: pin-api-version.ts <version of src/common/api-versions.ts> (got ${version ?? 'none'})`);
  // The document describes the newest version only: an older one was pinned when it was the newest.
  if (version !== LATEST_VERSION)
    throw new Error(`${version} is not the newest version (${LATEST_VERSION}); it was pinned when it was released`);
  const file = pinnedFile(version);
  if (existsSync(file))
    throw new Error(
      `${relative(process.cwd(), file)} exists: a released version is pinned once, and its shapes never change`,
    );
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, renderOpenApi());
  console.log(`pinned ${version} in ${relative(process.cwd(), file)}`);
}

if (require.main === module) main();
