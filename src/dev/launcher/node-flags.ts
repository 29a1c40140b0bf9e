// Node/V8 flags a service process starts with, wherever it is started: `npm
// start` (stack.ts), `npm run gateway` (package.json) and the Docker image and
// compose file. Heap sizes must be given at start; test/dev/launcher/node-flags.e2e.test.ts
// holds every place to this list.

/**
 * A young generation of 2 MiB semi-spaces, against V8's default of up to 16.
 * The gateway's young objects are requests and relayed events in flight, and
 * each young-generation collection pauses every stream it relays: with smaller
 * semi-spaces the collections come more often and end sooner. In nine
 * alternating pairs of bench runs (session 10), the relay's p99 at 8 streams
 * was lower with it in seven: median 8.6 ms against 10.2.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
