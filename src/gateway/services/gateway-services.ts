// The gateway's services, built in this one place (by main.ts) and handed to the app, whose routes
// call them: a route never builds a service, so a test can hand the app its own.
import type { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { Logger } from 'pino';
import type { Config } from '../../common/config';
import type { OutboundPolicy } from '../../common/outbound/policy';
import type { EventPublisher } from '../../common/relay/publisher';
import type { StatusCache } from '../../common/relay/status-cache';
import type { WorkflowStarter } from '../start-thread/starter';
import { DatastoreService } from './datastore-service';
import { RunEnds } from './run-end';
import { ScheduleService } from './schedule-service';
import { SessionService } from './session-service';
import { SessionFiles } from './session-files';
import { TaskService } from './task-service';
import { ApprovalService } from './approval-service';
import { RewindService } from './rewind-service';

export interface GatewayServices {
  tasks: TaskService;
  /** Gated tool calls and decisions on them. */
  approvals: ApprovalService;
  /** Rewinding a task to an earlier model turn. */
  rewinds: RewindService;
  sessions: SessionService;
  /** The files of sessions' workspaces. */
  files: SessionFiles;
  schedules: ScheduleService;
  datastores: DatastoreService;
  /** Ends the streams of runs that closed without a terminal event on the relay. */
  runEnds: RunEnds;
}

export interface ServiceDeps {
  client: Client;
  connection: Connection;
  config: Config;
  logger: Logger;
  cache: StatusCache;
  publisher: EventPublisher;
  /** Makes the submit path's Temporal calls (the gateway passes its relay-aware starter). */
  starter: WorkflowStarter;
  /** Encrypts datastores' connection details (sealed in Temporal, never returned). */
  payloadCodec: PayloadCodec;
  /** Checks the URLs users give (datastores, MCP servers) before anything starts. */
  outbound: OutboundPolicy;
}

export function buildServices(d: ServiceDeps): GatewayServices {
  const sessions = new SessionService(d.client, d.connection, d.config);
  const tasks = new TaskService(d.client, d.connection, d.cache, d.config, d.logger, d.starter);
  return {
    tasks,
    approvals: new ApprovalService(d.client, d.connection, tasks),
    rewinds: new RewindService(d.client, d.connection, tasks, d.cache, d.publisher, d.logger),
    sessions,
    files: new SessionFiles(d.config, sessions),
    schedules: new ScheduleService(d.client, d.connection, d.config),
    datastores: new DatastoreService(d.client, d.connection, d.payloadCodec, d.outbound, d.config),
    runEnds: new RunEnds(d.client, d.connection, d.publisher, d.cache),
  };
}
