// The web console's variables (docs/console.md), part of the one configuration schema (config.ts
// spreads them into envSchema).
import { z } from 'zod';

export const consoleVariables = {
  /** `on`: the gateway serves the web console at /console (built by `npm start` and the image); `off`: /console is a 404. */
  CONSOLE: z.enum(['on', 'off']).default('on'),
  /**
   * Where operators open the Temporal Web UI (e.g. http://localhost:8233): the console links each
   * task to its workflow there. `npm start` sets it to the dev server's UI; unset: no link.
   */
  TEMPORAL_UI_URL: z.url().optional(),
};
