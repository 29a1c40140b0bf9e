// The service's activities for workflow tests: the real session, run-watch and
// tool activities and the real thread reader (so the thread really travels by
// query), with a fake model and a recording relay. The fake model follows the
// run's last user message:
//   tools:N      N calculate calls at once, then an answer from the results
//   loop:N       one calculate call a turn, N turns, then an answer
//   wait:S:K     K calls of the `wait` tool for S seconds each, one a turn
//   badtool      a calculate call with a bad expression (an error result)
//   unknowntool  a call of a tool that is not offered
//   malformed    an answer the workflow cannot read (toolCalls missing)
//   mcp:N        N calls of the MCP tool srv__echo at once, then an answer from the results
//   handoff:A    a call of transfer_to_A, then an answer naming the agent that has the conversation
//   turns:JSON   the calls of each turn as given, [[[name, args], ...], ...], then an answer from all results
//   reject...    HTTP 400 from the model
//   slow...      5 s of heartbeats before answering
//   anything else: echo:<message>
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createSessionActivities } from '../../activities/sessions';
import { createRunActivities } from '../../activities/runs';
import { createToolActivities } from '../../activities/tools/tool-activities';
import { createWebActivities, type RunWebToolInput, type WebTools } from '../../activities/web/web-activities';
import {
  createBrowserActivities,
  type BrowserRunner,
  type RunBrowserToolInput,
} from '../../activities/browser/browser-activities';
import { readThread } from '../../activities/thread-reader';
import { rewindOf } from '../../activities/rewind-check';
import { offeredSpecs, type ModelTurnInput, type ModelTurnOutput } from '../../activities/model-turn';
import { releaseSlot, type PublishApprovalInput, type PublishEndInput } from '../../activities/relay';
import pino from 'pino';
import type { RunComputerToolInput, RunComputerToolOutput } from '../../activities/computer/computer-activities';
import type { FilesChanged } from '../../activities/computer/files-changed';
import { randomUUID } from 'node:crypto';
import type { RunMessage, TaskInput } from '../../workflows/types';
import { type FlatTaskInput, readTaskInput } from '../../workflows/task-input';

export interface Recorder {
  /** Event types published per task, in order, with their producer. */
  published: Record<string, { type: string; producer: string }[]>;
  /** Activity calls per task id. */
  calls: Record<string, string[]>;
  /** The thread (session + run) each model turn read, by task id, last turn last. */
  seen: Record<string, string[][]>;
  /** The handoff agent of each model turn (undefined: the main agent) and the tools it was offered, by task id. */
  turns: Record<string, { agent?: string; tools: string[] }[]>;
  /** What the fake computer did, by task id, in order: `start <call id>`, then `end <call id>` or `cancelled <call id>`. */
  computer: Record<string, string[]>;
}

export function recorder(): Recorder {
  return { published: {}, calls: {}, seen: {}, turns: {}, computer: {} };
}

const USAGE = { promptTokens: 3, completionTokens: 2 };

function lastUser(run: RunMessage[]): string {
  for (let i = run.length - 1; i >= 0; i--) if (run[i].role === 'user') return run[i].content;
  return '';
}

/** The run's messages since its last user message. */
function sinceUser(run: RunMessage[]): RunMessage[] {
  let i = run.length - 1;
  while (i >= 0 && run[i].role !== 'user') i--;
  return run.slice(i + 1);
}

function decide(input: ModelTurnInput, run: RunMessage[]): Omit<ModelTurnOutput, 'lastSeq' | 'usage'> {
  const said = lastUser(run);
  const since = sinceUser(run);
  const done = since.filter((m) => m.role === 'assistant' && m.tool_calls?.length);
  const results = since.filter((m) => m.role === 'tool').map((m) => m.content);
  const call = (name: string, args: object, k = 0) => ({
    id: `call_${input.step}_${k}`,
    name,
    arguments: JSON.stringify(args),
  });
  const answer = (content: string) => ({ content, thinking: '', toolCalls: [] });
  const ask = (calls: ReturnType<typeof call>[]) => ({ content: '', thinking: '', toolCalls: calls });
  let m: RegExpMatchArray | null;
  if ((m = said.match(/^tools:(\d+)/))) {
    if (done.length) return answer(`results:${results.join(',')}`);
    return ask(Array.from({ length: Number(m[1]) }, (_, k) => call('calculate', { expression: `${k + 1} * 10` }, k)));
  }
  if ((m = said.match(/^loop:(\d+)/)))
    return done.length >= Number(m[1])
      ? answer(`looped:${done.length}`)
      : ask([call('calculate', { expression: `${done.length} + 1` })]);
  if ((m = said.match(/^wait:(\d+):(\d+)/)))
    return done.length >= Number(m[2])
      ? answer(`waited:${done.length}`)
      : ask([call('wait', { seconds: Number(m[1]) })]);
  if ((m = said.match(/^mcp:(\d+)/))) {
    if (done.length) return answer(`results:${results.join(',')}`);
    return ask(Array.from({ length: Number(m[1]) }, (_, k) => call('srv__echo', { text: `t${k}` }, k)));
  }
  if ((m = said.match(/^handoff:(\w+)/)))
    return done.length ? answer(`agent:${input.agent?.name ?? 'main'}`) : ask([call(`transfer_to_${m[1]}`, {})]);
  if ((m = said.match(/^turns:(.*)$/s))) {
    const turns = JSON.parse(m[1]) as [string, object][][];
    if (done.length >= turns.length) return answer(`results:${results.join(',')}`);
    return ask(turns[done.length].map(([name, args], k) => call(name, args, k)));
  }
  if (said === 'badtool')
    return done.length ? answer(`tool said: ${results.join(',')}`) : ask([call('calculate', { expression: '2 +' })]);
  if (said === 'unknowntool')
    return done.length ? answer(`tool said: ${results.join(',')}`) : ask([call('no_such_tool', {})]);
  return answer(`echo:${said}`);
}

/** A DAG's relay activities that only count the events they are given, and a step output check that passes. */
export function dagRelayFakes() {
  let seq = 0;
  return {
    async publishDagEvents(input: { events: readonly unknown[] }) {
      seq += input.events.length;
      return { lastSeq: seq };
    },
    async publishStepEnd() {
      return { lastSeq: ++seq };
    },
    async checkStepOutput() {
      return { output: {} };
    },
  };
}

/** What a fake computer call changed: as the real activity reports, files only for the calls that may change any. */
function fakeChanges(tool: string, args: Record<string, unknown>): FilesChanged | undefined {
  const none = { created: [], modified: [], deleted: [] };
  const path = String(args.path ?? '');
  if (tool === 'str_replace_editor' && args.command !== 'view')
    return args.command === 'create' ? { ...none, created: [path] } : { ...none, modified: [path] };
  if (tool !== 'bash') return undefined;
  const command = String(args.command ?? '');
  let m: RegExpMatchArray | null;
  if ((m = command.match(/^touch (\S+)$/))) return { ...none, created: [m[1]] };
  if ((m = command.match(/^rm (\S+)$/))) return { ...none, deleted: [m[1]] };
  if ((m = command.match(/>> (\S+)$/))) return { ...none, modified: [m[1]] };
  return none;
}

/** Options of the fake activities. */
export interface FakeOptions {
  /** Awaited by each computer call after it started (heartbeating, so a cancel reaches it): a test holds calls with it. */
  holdComputerCall?: (input: RunComputerToolInput) => Promise<void>;
}

/**
 * The session's computer, faked: a call records its start, waits for `holdComputerCall` (a bash
 * command `hang` waits until it is cancelled; a run that allowed network says so at the start), publishes its result and records its end (or its
 * cancellation); it answers `<tool>: <command>` and the files `fakeChanges` names.
 */
function fakeComputer(
  rec: Recorder,
  publish: (taskId: string, producer: string, b: { type: string }[]) => { lastSeq: number },
  options: FakeOptions,
) {
  return async (input: RunComputerToolInput): Promise<RunComputerToolOutput> => {
    const log = (rec.computer[input.taskId] ??= []);
    log.push(`start ${input.call.id}${input.network ? ' with network' : ''}`);
    const args = JSON.parse(input.call.arguments || '{}') as Record<string, unknown>;
    const ctx = Context.current();
    ctx.heartbeat();
    // Heartbeats carry the cancel to the activity; ctx.cancelled rejects with it.
    const beat = setInterval(() => ctx.heartbeat(), 100);
    try {
      const hold = args.command === 'hang' ? new Promise<never>(() => undefined) : options.holdComputerCall?.(input);
      await Promise.race([hold, ctx.cancelled]);
    } catch (err) {
      if (ctx.cancellationSignal.aborted) log.push(`cancelled ${input.call.id}`);
      throw err;
    } finally {
      clearInterval(beat);
    }
    const r = publish(input.taskId, input.producer, [{ type: 'agent_tool_response' }]);
    log.push(`end ${input.call.id}`);
    const files = fakeChanges(input.call.name, args);
    const content = `${input.call.name}: ${String(args.command ?? '')}`;
    return { content, isError: false, lastSeq: r.lastSeq, ...(files && { files }) };
  };
}

/**
 * The web tools, faked behind the real runWebTool activity: web_search answers two result URLs,
 * web_fetch answers the page's URL (a `.png` one is "saved" to the workspace).
 */
const FAKE_WEB: WebTools = {
  web_search: async (args) => ({
    text: `1. A\n   https://a.example/${String(args.query)}\n\n2. B\n   https://b.example/${String(args.query)}`,
  }),
  web_fetch: async (args) => {
    const url = String(args.url);
    if (url.endsWith('.png')) return { text: `URL: ${url}\n\nsaved`, files: ['downloads/x.png'] };
    return { text: `URL: ${url}\n\npage` };
  },
};

/** The browser, faked behind the real runBrowserTool activity: a screenshot is "saved" and named. */
const FAKE_BROWSER: BrowserRunner = {
  async call(_session, tool, args) {
    if (tool === 'browser_take_screenshot')
      return {
        text: 'Saved a screenshot to /workspace/screenshots/shot.png',
        files: ['screenshots/shot.png'],
        screenshots: [{ path: 'screenshots/shot.png', url: 'https://a.example/' }],
      };
    return { text: `${tool} ${String(args.url ?? '')}`.trim() };
  },
};

// eslint-disable-next-line max-lines-per-function -- the factory's body is the fake activities, one short closure each over the recorder
export function fakeActivities(
  env: () => TestWorkflowEnvironment,
  taskQueue: string,
  rec: Recorder,
  options: FakeOptions = {},
) {
  const config = { TEMPORAL_TASK_QUEUE: taskQueue, RUN_WATCH_MS: 500, SESSION_IDLE_CLOSE_MS: 0 };
  const record = (taskId: string, name: string) => void (rec.calls[taskId] ??= []).push(name);
  const publish = (taskId: string, producer: string, bodies: readonly { type: string }[]) => {
    (rec.published[taskId] ??= []).push(...bodies.map((b) => ({ type: b.type, producer })));
    return { added: bodies.length, lastSeq: rec.published[taskId].length };
  };
  const publisher = {
    publish: async (taskId: string, _s: string, producer: string, _o: number, bodies: { type: string }[]) =>
      publish(taskId, producer, bodies),
  };
  const deps = () => ({ temporal: env().client, config, publisher }) as never;
  const logger = pino({ enabled: false });
  const sessions = () => createSessionActivities(deps());
  return {
    async joinSession(input: { taskId: string; account: string; session: string }) {
      record(input.taskId, 'joinSession');
      return sessions().joinSession(input);
    },
    async finishTurn(input: Parameters<ReturnType<typeof createSessionActivities>['finishTurn']>[0]) {
      record(input.taskId, 'finishTurn');
      return sessions().finishTurn(input);
    },
    readExchange: (input: { taskId: string }) => sessions().readExchange(input),
    readHandover: (input: { taskId: string }) => sessions().readHandover(input),
    async requestSlot(input: Parameters<ReturnType<typeof createSessionActivities>['requestSlot']>[0]) {
      record(input.taskId, 'requestSlot');
      return sessions().requestSlot(input);
    },
    closedRuns: (input: { workflowIds: string[] }) => createRunActivities(deps()).closedRuns(input),
    runState: (input: { workflowId: string }) => createRunActivities(deps()).runState(input),
    awaitRunClose: (input: { workflowId: string }) => createRunActivities(deps()).awaitRunClose(input),
    runTool: (input: Parameters<ReturnType<typeof createToolActivities>['runTool']>[0]) => {
      record(input.taskId, 'runTool');
      return createToolActivities(deps()).runTool(input);
    },
    runComputerTool: fakeComputer(rec, publish, options),
    runBrowserTool: (input: RunBrowserToolInput) => {
      record(input.taskId, `runBrowserTool:${input.call.name}`);
      const deps = {
        publisher,
        config: { WORKSPACE_DIR: '/nonexistent-browser-fake', DATA_DIR: '' },
        browser: FAKE_BROWSER,
      };
      return createBrowserActivities(deps as never).runBrowserTool(input);
    },
    runWebTool: (input: RunWebToolInput) => {
      record(input.taskId, `runWebTool:${input.call.name}`);
      const web = { publisher, config: { WORKSPACE_DIR: '/nonexistent-web-tools-fake', DATA_DIR: '' }, web: FAKE_WEB };
      return createWebActivities(web as never).runWebTool(input);
    },
    async listMcpTools(input: { account: string; server: { name: string } }) {
      if (input.server.name === 'down')
        throw ApplicationFailure.create({
          type: 'mcp_unavailable',
          message: 'the MCP server "down" could not be used: connection refused',
          nonRetryable: true,
        });
      return {
        server: input.server.name,
        tools: [
          {
            name: 'echo',
            description: 'Echoes its text.',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
          },
        ],
      };
    },
    async callMcpTool(input: { taskId: string; producer: string; tool: string; call: { arguments: string } }) {
      record(input.taskId, `callMcpTool:${input.tool}`);
      const r = publish(input.taskId, input.producer, [{ type: 'agent_tool_response' }]);
      return {
        content: `echo:${(JSON.parse(input.call.arguments) as { text: string }).text}`,
        isError: false,
        lastSeq: r.lastSeq,
      };
    },
    async publishApproval(input: PublishApprovalInput) {
      record(input.taskId, `publishApproval:${input.view?.status ?? 'step'}`);
      const r = publish(input.taskId, input.producer, input.events);
      return { lastSeq: r.lastSeq };
    },
    async publishEnd(input: PublishEndInput) {
      record(input.taskId, 'publishEnd');
      // The run's slot goes back as the real activity gives it back.
      if (input.releaseSlot)
        await releaseSlot({ temporal: env().client, logger }, input.releaseSlot.account, input.taskId);
      publish(input.taskId, input.producer ?? 'end', input.events);
    },
    async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
      // As the real activity does: a turn of a rewound run that has not taken the rewind in answers it.
      const rewound = await rewindOf(env().client, input.rewindCheck);
      if (rewound) {
        record(input.taskId, 'modelTurn:rewound');
        return {
          content: '',
          thinking: '',
          toolCalls: [],
          usage: { promptTokens: 0, completionTokens: 0 },
          lastSeq: input.floor,
          rewound,
        };
      }
      record(input.taskId, 'modelTurn');
      if (input.prelude) publish(input.taskId, input.producer ?? `s${input.step}`, input.prelude);
      const { session, run } = await readThread(env().client, input);
      (rec.seen[input.taskId] ??= []).push([...session, ...run].map((m) => m.content));
      const tools = offeredSpecs(input).map((t) => t.name);
      (rec.turns[input.taskId] ??= []).push({ agent: input.agent?.name, tools });
      const said = lastUser(run);
      if (said.startsWith('reject'))
        throw ApplicationFailure.nonRetryable('the model rejected the request (HTTP 400)', 'ModelBadRequest');
      // "slow …": 5 s; "stuck …": 10 minutes, longer than any test: only a cancel ends it in time. Heartbeating each 100 ms.
      if (said.startsWith('slow') || said.startsWith('stuck')) {
        for (let i = 0; i < (said.startsWith('stuck') ? 6000 : 50); i++) {
          Context.current().heartbeat();
          await Context.current().sleep(100);
        }
      }
      if (said === 'malformed')
        return { content: 'x', thinking: '', usage: USAGE, lastSeq: 0 } as unknown as ModelTurnOutput;
      const out = decide(input, run);
      const closing = [
        ...(out.content ? [{ type: 'agent_response_start' }, { type: 'agent_response' }] : []),
        ...out.toolCalls.flatMap(() => [{ type: 'agent_tool_use_start' }, { type: 'agent_tool_use' }]),
      ];
      const r = publish(input.taskId, input.producer ?? `s${input.step}`, [
        ...closing,
        ...(out.toolCalls.length ? [] : [{ type: 'agent_step' }]),
      ]);
      return { ...out, usage: USAGE, lastSeq: r.lastSeq };
    },
  };
}

/**
 * Fields of a test's task input, by name: each lands in its group of TaskInput as readTaskInput
 * puts a flat input's (workflows/task-input.ts; its unit test holds where each one goes).
 */
export type InputFields = Partial<FlatTaskInput>;

/** A task's input as the gateway builds it (grouped), with overrides. */
export function taskInput(message: string, over: InputFields = {}): TaskInput {
  return readTaskInput({
    taskId: `task_${randomUUID().replace(/-/g, '')}`,
    account: 'acct',
    session: `sess_${randomUUID().replace(/-/g, '')}`,
    message,
    mode: 'base',
    streamTokens: false,
    background: false,
    createdAt: new Date().toISOString(),
    metadata: {},
    multitask: 'queue',
    modelHeartbeatTimeoutMs: 5000,
    maxSteps: 25,
    tools: ['current_time', 'calculate', 'wait'],
    toolResultMaxChars: 64 * 1024,
    ...over,
  });
}

/** A grouped input as runs started before the grouped shape carry it: every field at the top. */
export function flatInput({ request, limits, admission, ...identity }: TaskInput): FlatTaskInput {
  return { ...identity, ...request, ...limits, ...admission };
}
