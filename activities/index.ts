// Activities are built by a factory that receives their clients, so tests can
// hand them a real Redis and a scripted model, and the worker the real ones.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../src/common/config';
import { EventPublisher } from '../src/common/relay/publisher';
import type { ModelStreamRunner } from './model-stream';
import type { StatusCache } from '../src/common/relay/status-cache';
import { createModelActivities } from './model-turn';
import { createRelayActivities } from './relay';
import { createSessionActivities } from './sessions';
import { createToolActivities } from './tools/tool-activities';
import { createRunActivities } from './runs';
import { createMcpActivities } from './mcp/mcp-activities';
import { createCallbackActivities } from './callbacks';
import { createScheduleActivities } from './schedules';
import { createFinalOutputActivities } from './final-output';
import { createDagActivities } from './dag';
import { createDatastoreActivities } from './datastores';
import { createComputerActivities } from './computer/computer-activities';
import type { ComputerTools } from './computer/computer-tools';
import { createWebActivities, type WebTools } from './web/web-activities';
import { createBrowserActivities, type BrowserRunner } from './browser/browser-activities';
import type { DatastoreAccess } from '../src/common/datastores/access';
import type { PolicyFetch } from '../src/common/outbound/fetch';
import type { McpPool } from './mcp/pool';
import type { TaskInputConfig } from '../src/common/tasks/task-input';

export interface ActivityDeps {
  /** Runs model streams: the worker's token thread, or in process (inProcessModelStream). */
  modelStream: ModelStreamRunner;
  publisher: EventPublisher;
  statusCache: StatusCache;
  temporal: Client;
  /** The worker's MCP sessions; its fetch applies the outbound policy. */
  mcpPool: McpPool;
  /** The account's datastores (registrations, open sources); absent: the tools fail plainly. */
  datastores?: DatastoreAccess;
  /** The tools of sessions' computers (bash, the editor, search) around the worker's sandbox; absent: their calls fail plainly. */
  computer?: ComputerTools;
  /** The web tools (web_fetch, and web_search with a provider) around the outbound policy; absent: their calls fail plainly. */
  web?: WebTools;
  /** The worker's headless browser (one Chromium, a context per session); absent: its calls fail plainly. */
  browser?: BrowserRunner;
  /** The outbound policy's fetch, for callback deliveries (user-supplied URLs). */
  outboundFetch?: PolicyFetch;
  config: Pick<
    Config,
    | 'MODEL_ANSWER_MAX_BYTES'
    | 'TEMPORAL_TASK_QUEUE'
    | 'SESSION_IDLE_CLOSE_MS'
    | 'RUN_WATCH_MS'
    | 'MODEL_UNAVAILABLE_AFTER_MS'
    | 'WORKSPACE_DIR'
    | 'DATA_DIR'
  > &
    TaskInputConfig;
  logger: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createModelActivities(deps),
    ...createRelayActivities(deps),
    ...createSessionActivities(deps),
    ...createToolActivities(deps),
    ...createRunActivities(deps),
    ...createMcpActivities(deps),
    ...createCallbackActivities(deps),
    ...createScheduleActivities(deps),
    ...createFinalOutputActivities(deps),
    ...createDagActivities(deps),
    ...createDatastoreActivities(deps),
    ...createComputerActivities(deps),
    ...createWebActivities(deps),
    ...createBrowserActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
