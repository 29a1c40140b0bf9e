// The typed client of the Agent Execution Service:
//   import { AgentClient } from './client';
//   const agent = new AgentClient();                 // AGENT_URL / AGENT_API_KEY, else the `npm start` defaults
//   const { output } = await agent.run({ message: 'hello' });
//   for await (const ev of await agent.stream({ message: 'hi', streaming_tokens: true })) ...
export { AgentClient } from './client';
export type { RunOptions, StreamRunOptions, RunCallOptions } from './client';
export { EventStream } from './event-stream';
export type { StreamOptions } from './event-stream';
export { DEFAULT_API_KEY, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS } from './http';
export type { ClientOptions, RequestOptions } from './http';
export type { EventsOptions, ResultOptions } from './tasks';
export { SseParser } from './sse-parser';
export type { SseItem } from './sse-parser';
export {
  AgentApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  ConnectionTimeoutError,
  InternalServerError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableEntityError,
} from './errors';
export type * from './types';
