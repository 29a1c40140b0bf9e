// Runs before each file of an engine or e2e project (setupFiles in jest.config.js): ENGINE
// becomes the project's engine before the test file loads, since test/engine.ts, the stack's
// launcher and the processes it starts read it from the environment. Jest gives each file a
// fresh module registry, so every file sees its own project's engine.
process.env.ENGINE = (globalThis as { __ENGINE__?: string }).__ENGINE__ ?? 'embedded';

// A connection closed while one of its calls waits to retry must not throw from that timer later
// (the file says why); the package's own setup does the same.
import { installConnectionCloseGuard } from '../../packages/embedded-temporal/test/support/connection-close';
installConnectionCloseGuard();
