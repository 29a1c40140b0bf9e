// Runs before each file of an engine or e2e project of the package's jest.config.js: ENGINE becomes
// the project's engine before the test file loads (test/support/engine.ts reads it). The
// repository's run does the same with its own copy, test/setup/engine.ts.
process.env.ENGINE = (globalThis as { __ENGINE__?: string }).__ENGINE__ ?? 'embedded';

// A connection closed while one of its calls waits to retry must not throw from that timer later.
import { installConnectionCloseGuard } from '../support/connection-close';
installConnectionCloseGuard();
