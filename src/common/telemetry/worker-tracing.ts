// The worker's part of tracing (@temporalio/interceptors-opentelemetry): the
// workflow interceptors, bundled into the workflow sandbox, start a
// `RunWorkflow:<type>` span under the context the starter put in the
// workflow's headers and a `StartActivity:<type>` span per activity (local ones
// too), whose context goes in the activity's headers; the activity interceptor
// starts `RunActivity:<type>` under it. Spans made in the sandbox leave it
// through a sink into this process's span processor; a replay does not export
// them again (the sink is not called during replay), and span ids come from
// the workflow's seeded random, so a replayed run's ids are the ones it had.
//
// The interceptors' SDK flags keep replay deterministic: histories recorded
// without them replay with them (test/workflows/replay.test.ts replays every
// saved history with and without them), and a traced run replays without them
// (test/common/telemetry/traces.e2e.test.ts).
import type {
  ActivityInboundCallsInterceptor,
  ActivityOutboundCallsInterceptor,
  InjectedSinks,
  WorkerOptions,
} from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { Tracing } from './tracing';

/** The package's workflow interceptors module (inbound, outbound, internals), as the worker bundles it. */
export const WORKFLOW_TRACING_INTERCEPTORS =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** Worker options that trace workflows and activities; none without tracing. */
export function workerTracing(t: Tracing | undefined): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!t) return {};
  const worker =
    require('@temporalio/interceptors-opentelemetry/lib/worker') as typeof import('@temporalio/interceptors-opentelemetry/lib/worker');
  return {
    interceptors: {
      workflowModules: [WORKFLOW_TRACING_INTERCEPTORS],
      activity: [
        (
          ctx: ActivityContext,
        ): { inbound: ActivityInboundCallsInterceptor; outbound: ActivityOutboundCallsInterceptor } => ({
          inbound: new worker.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new worker.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: workflowSpanSinks(t, worker.makeWorkflowExporter),
  };
}

/** The tracing options split for a prebuilt bundle: its workflow interceptor modules go into the bundle, the rest to the worker. */
export function bundledTracing(opts: Pick<WorkerOptions, 'interceptors' | 'sinks'>): {
  interceptorModules: string[];
  worker: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
} {
  const { workflowModules = [], ...interceptors } = opts.interceptors ?? {};
  return { interceptorModules: workflowModules, worker: { ...opts, ...(opts.interceptors && { interceptors }) } };
}

type MakeExporter = typeof import('@temporalio/interceptors-opentelemetry/lib/worker').makeWorkflowExporter;

/**
 * The package's sink, given only the workflow's identity. Its own copies the whole
 * WorkflowInfo onto every span as attributes, memo and search attributes included
 * (decrypted: a task's metadata, its account, its session).
 */
export function workflowSpanSinks(t: Tracing, makeWorkflowExporter: MakeExporter): InjectedSinks<OpenTelemetrySinks> {
  const inner = makeWorkflowExporter(t.processor, t.resource);
  return {
    exporter: {
      export: {
        fn: (info, spans) => inner.export.fn(identity(info) as unknown as WorkflowInfo, spans),
        callDuringReplay: false,
      },
    },
  };
}

/** The attributes a workflow's spans get: ids and names, nothing its inputs or memo hold. */
export function identity(info: WorkflowInfo): Record<string, string | number> {
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    workflowType: info.workflowType,
    taskQueue: info.taskQueue,
    namespace: info.namespace,
    attempt: info.attempt,
  };
}
