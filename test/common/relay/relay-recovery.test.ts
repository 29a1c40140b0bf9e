// Which of a run's complete events the relay lacks: matched by identity (tool
// call ids, steps, progress, inputs, handoffs), answers by their text rebuilt
// from tokens (less retracted text), per step tag; counted, so a repeated
// event is matched once.
import { missingEvents } from '../../../src/common/relay/relay-recovery';
import type { AgentEvent, AgentEventBody } from '../../../src/common/relay/events';

let seq = 0;
const on = (bodies: (AgentEventBody & { workflow_id?: string; step_id?: string })[]): AgentEvent[] =>
  bodies.map((b) => ({ ...b, seq: ++seq, session: 's', task_id: 't' }) as AgentEvent);

const record: AgentEventBody[] = [
  { type: 'agent_started' },
  { type: 'agent_tool_use_start', tool_call_id: 'c1' },
  { type: 'agent_tool_use', tool_call_id: 'c1', content: '{"tool":"calculate","input":{}}' },
  { type: 'agent_tool_response', tool_call_id: 'c1', content: '{"tool":"calculate","content":"42"}' },
  { type: 'agent_step', step: '1' },
  { type: 'agent_response_start' },
  { type: 'agent_response', content: 'the answer is 42' },
  { type: 'agent_step', step: '2' },
  { type: 'agent_cost', cost: '0.1' },
  { type: 'agent_completed' },
];

test('a stream that has everything lacks nothing: tokens make up the answer, retracted text left out', () => {
  const stream = on([
    ...record.slice(0, 5),
    { type: 'agent_response_start' },
    { type: 'agent_response', content: 'the ans' },
  ]);
  const retract = on([{ type: 'agent_retract', from_seq: stream[5].seq, attempt: 2 }]);
  const rest = on([
    { type: 'agent_response_start' },
    { type: 'agent_response', content: 'the answer ' },
    { type: 'agent_response', content: 'is 42' },
    { type: 'agent_step', step: '2' },
  ]);
  expect(missingEvents([...stream, ...retract, ...rest], record)).toEqual([]);
});

test("what the stream lost comes back in the record's order; a half-streamed answer comes back whole; the end is not recovered", () => {
  const stream = on([
    record[0],
    record[1],
    { type: 'agent_response_start' },
    { type: 'agent_response', content: 'the answer' },
  ]);
  expect(missingEvents(stream, record)).toEqual([
    record[2],
    record[3],
    record[4],
    { type: 'agent_response_start' },
    record[6],
    record[7],
  ]);
});

test('an empty stream (Redis lost it all) gets every complete event back', () => {
  expect(missingEvents([], record).map((e) => e.type)).toEqual([
    'agent_started',
    'agent_tool_use_start',
    'agent_tool_use',
    'agent_tool_response',
    'agent_step',
    'agent_response_start',
    'agent_response',
    'agent_step',
  ]);
});

test("matching is per step tag and counted: another step's events, or one copy of a repeated input, do not stand in", () => {
  const tag = { workflow_id: 'w', step_id: 'a' };
  const stepRecord: AgentEventBody[] = [
    { type: 'agent_input', content: 'again' },
    { type: 'agent_input', content: 'again' },
    { type: 'agent_response', content: 'done' },
  ];
  const stream = on([
    { type: 'agent_input', content: 'again', ...tag },
    { type: 'agent_response_start', workflow_id: 'w', step_id: 'b' },
    { type: 'agent_response', content: 'done', workflow_id: 'w', step_id: 'b' },
  ]);
  expect(missingEvents(stream, stepRecord, tag)).toEqual([
    { type: 'agent_input', content: 'again' },
    { type: 'agent_response_start' },
    { type: 'agent_response', content: 'done' },
  ]);
});

test('progress and step ends of a DAG are matched by value and status', () => {
  const dag: AgentEventBody[] = [
    { type: 'agent_step', step: 'w/a', workflow_id: 'w', step_id: 'a', name: 'a', status: 'completed' },
    { type: 'agent_progress', progress: 0.5 },
    { type: 'agent_progress', progress: 1 },
  ];
  expect(missingEvents(on([{ type: 'agent_progress', progress: 0.5 }]), dag)).toEqual([dag[0], dag[2]]);
  // A step's end on the stream carries its step's tag, as in the record.
  expect(missingEvents(on([dag[0], dag[1]]), dag)).toEqual([dag[2]]);
});
