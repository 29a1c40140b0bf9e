// The task page's fold of a task's events (console/src/lib/timeline.ts): tokens joined into one
// answer, a tool call with its input, output and approval, a retracted attempt's tokens gone, a
// rewind's abandoned branch marked, DAG steps' status, repeats and disorder harmless.
import type { AgentEvent } from '../../client/types';
import { buildTimeline } from '../../console/src/lib/timeline';

let seq = 0;
const ev = (body: Record<string, unknown>, extra: Record<string, unknown> = {}): AgentEvent =>
  ({ session: 's', task_id: 't', seq: ++seq, ...body, ...extra }) as unknown as AgentEvent;

beforeEach(() => {
  seq = 0;
});

test('tokens make one answer; a tool call carries its input, approval, output; the end is seen', () => {
  const events = [
    ev({ type: 'agent_started' }),
    ev({ type: 'agent_tool_use_start', tool_call_id: 'c1' }),
    ev({
      type: 'agent_tool_use',
      tool_call_id: 'c1',
      content: JSON.stringify({ tool: 'calculate', input: { expression: '1+1' } }),
    }),
    ev({
      type: 'agent_approval_request',
      tool_call_id: 'c1',
      tool: 'calculate',
      input: { expression: '1+1' },
      timeout_at: 'x',
    }),
    ev({
      type: 'agent_approval_decision',
      tool_call_id: 'c1',
      decision: 'approve',
      by: 'user',
      input: { expression: '20+22' },
    }),
    ev({
      type: 'agent_tool_response',
      tool_call_id: 'c1',
      content: JSON.stringify({ tool: 'calculate', content: '42' }),
    }),
    ev({ type: 'agent_response_start' }),
    ev({ type: 'agent_response', content: 'the answer ' }),
    ev({ type: 'agent_response', content: 'is 42' }),
    ev({ type: 'agent_step', step: '1' }),
    ev({ type: 'agent_cost', cost: '0.0012' }),
    ev({ type: 'agent_completed' }),
  ];
  const t = buildTimeline([...events].reverse().concat(events.slice(3, 6)));
  expect(t.items.map((i) => i.kind)).toEqual(['tool', 'answer', 'completed']);
  expect(t.items[0]).toMatchObject({
    tool: 'calculate',
    input: { expression: '20+22' },
    output: '42',
    approval: { state: 'approve', by: 'user' },
  });
  expect(t.items[1]).toMatchObject({ text: 'the answer is 42' });
  expect(t).toMatchObject({ cost: '0.0012', ended: true, lastSeq: 12 });
});

test("a retracted attempt's tokens are dropped; a recovered answer replaces its tokens", () => {
  const t = buildTimeline([
    ev({ type: 'agent_response_start' }),
    ev({ type: 'agent_response', content: 'half an ans' }),
    ev({ type: 'agent_retract', from_seq: 1, attempt: 2 }),
    ev({ type: 'agent_response_start' }),
    ev({ type: 'agent_response', content: 'whole ' }),
    ev({ type: 'agent_response', content: 'whole answer', recovered: true }),
  ]);
  expect(t.items.filter((i) => i.kind === 'answer').map((i) => (i as { text: string }).text)).toEqual([
    'whole ',
    'whole answer',
  ]);
});

test("a rewind marks the abandoned branch superseded; a superseded end is not the task's end", () => {
  const t = buildTimeline([
    ev({ type: 'agent_response_start' }),
    ev({ type: 'agent_response', content: 'old' }),
    ev({ type: 'agent_completed' }),
    ev({ type: 'agent_rewound', step: 1, run_id: 'r2', superseded_seqs: { from_seq: 1, to_seq: 3 } }),
    ev({ type: 'agent_response_start' }),
    ev({ type: 'agent_response', content: 'new' }),
  ]);
  expect(t.items.map((i) => [i.kind, i.superseded])).toEqual([
    ['answer', true],
    ['completed', true],
    ['rewound', false],
    ['answer', false],
  ]);
  expect(t.ended).toBe(false);
});

test("DAG steps: ended ones by their agent_step, begun ones running; each step's events tagged", () => {
  const tag = (s: string) => ({ workflow_id: 'w', step_id: s });
  const t = buildTimeline([
    ev({ type: 'agent_response_start' }, tag('a')),
    ev({ type: 'agent_response', content: 'a done' }, tag('a')),
    ev({ type: 'agent_step', step: 'w/a', name: 'A', status: 'completed' }, tag('a')),
    ev({ type: 'agent_response_start' }, tag('b')),
  ]);
  expect(Object.fromEntries(t.steps)).toEqual({ 'w/a': 'completed', 'w/b': 'running' });
  expect(t.items[0]).toMatchObject({ kind: 'answer', step: 'w/a', text: 'a done' });
});
