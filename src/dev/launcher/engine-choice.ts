// Which engine `npm start` runs when ENGINE is not set: the official Temporal
// dev server (the Temporal CLI's `server start-dev`), because it brings the
// Temporal Web UI, where users inspect, replay and debug their runs, and it is
// the server their production cluster will behave like. Two exceptions keep a
// start working as before: a data folder holding only the embedded engine's
// runs resumes them on the embedded engine (the two engines' files are not
// interchangeable), and a machine where the CLI cannot be installed starts the
// embedded engine, saying why. ENGINE=embedded chooses ours outright.
import fs from 'node:fs';
import path from 'node:path';
import { EngineName, EngineUnavailableError, engineFromEnv, realTemporalCli } from './engines';

export interface EngineChoice {
  engine: EngineName;
  /** Why the start runs this engine when ENGINE did not say (for the banner). */
  note?: string;
}

/** The embedded engine's file and the dev server's, in a data folder (src/dev/launcher/engines.ts startEngine). */
const EMBEDDED_DB = 'temporal.db';
const CLI_DB = 'temporal-cli.sqlite';

export function chooseStartEngine(env: NodeJS.ProcessEnv, dataDir: string, say: (line: string) => void): EngineChoice {
  if (env.ENGINE) return { engine: engineFromEnv(env) };
  const has = (f: string) => fs.existsSync(path.join(dataDir, f));
  if (has(EMBEDDED_DB) && !has(CLI_DB)) {
    return {
      engine: 'embedded',
      note: `${path.join(dataDir, EMBEDDED_DB)} holds the embedded engine's runs, so they resume there (ENGINE=temporal-cli starts the official dev server with an empty history)`,
    };
  }
  try {
    if (!cliInstalled())
      say('installing the Temporal CLI (the official dev server and its Web UI) into .tools/, first start only...');
    realTemporalCli();
    return { engine: 'temporal-cli' };
  } catch (err) {
    if (!(err instanceof EngineUnavailableError)) throw err;
    return { engine: 'embedded', note: `the Temporal CLI could not be installed here (${err.message}); no Web UI` };
  }
}

function cliInstalled(): boolean {
  const tools = path.resolve(__dirname, '../../../.tools');
  return (
    fs.existsSync(tools) &&
    fs
      .readdirSync(tools)
      .some((d) => d.startsWith('temporal-cli-') && fs.existsSync(path.join(tools, d, 'bin', 'temporal')))
  );
}
