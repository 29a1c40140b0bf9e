// POST /tasks/{id}/rewind over HTTP on the real processes (docs/rewind.md): a running task sent back
// to its turn 2 with a message (the stream keeps the abandoned branch, marked superseded, then
// agent_rewound, then the new branch to its end); a finished task sent back to its turn 1 with its
// message replaced (the bash call of the abandoned branch listed as having happened; the session
// gets the new exchange); the refusals.
import { KEY_A, KEY_B, readSse, useStack, waitUntil } from './helpers';
import { startReceiver, type Receiver } from './callback-receiver';

jest.setTimeout(120_000);
const ctx = useStack({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});
const call: ReturnType<typeof useStack>['call'] = (...args) => ctx.call(...args);

test('a running task sent back to turn 2: the abandoned branch stays on the stream, superseded; the new branch runs to its end', async () => {
  const message =
    '[[tool name=calculate args={"expression":"1 + 1"}]] [[tool name=calculate turn=2 args={"expression":"2 + 2"}]] [[tool name=wait turn=3 args={"seconds":3600}]] count';
  const submit = await call('POST', '/', { body: { message, background: true } });
  const id = submit.json.task_id;
  await waitUntil(
    'turn 3 under way',
    async () => (await call('GET', `/tasks/${id}`)).json,
    (v) => v.current_step === '3',
    { stepMs: 100 },
  );
  // A client following the task live, from before the rewind (its answer's head is in: it is subscribed).
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${id}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  const following = readSse(res, (e) => e.data.type === 'agent_completed' && !e.data.superseded);
  const r = await call('POST', `/tasks/${id}/rewind`, {
    body: { step: 2, message: '[[say text="rewound"]] stop there' },
  });
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ task_id: id, step: 2, status: 'running', side_effects: [] });
  const { from_seq, to_seq } = r.json.superseded_seqs;
  expect(to_seq).toBeGreaterThanOrEqual(from_seq);
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'rewound' });

  const afterwards = await fetch(`${ctx.stack().gatewayUrl}/tasks/${id}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  const stream = await readSse(afterwards);
  const seqs = stream.map((e) => Number(e.id));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1)); // every event once, in order: none lost, none repeated
  const rewound = stream.find((e) => e.data.type === 'agent_rewound')!;
  expect(rewound.data).toMatchObject({ step: 2, run_id: r.json.run_id, superseded_seqs: { from_seq, to_seq } });
  for (const e of stream)
    expect([e.id, e.data.superseded === true]).toEqual([e.id, Number(e.id) >= from_seq && Number(e.id) <= to_seq]);
  // The stream ended at the new branch's end, after the rewind.
  expect(stream.at(-1)!.data).toMatchObject({ type: 'agent_completed' });
  expect(Number(stream.at(-1)!.id)).toBeGreaterThan(Number(rewound.id));
  // The live client got every event once, the rewind among them, and followed the new branch to its end.
  const live = await following;
  expect(live.map((e) => e.id)).toEqual(stream.map((e) => e.id));
  expect(live.map((e) => e.data.type)).toEqual(stream.map((e) => e.data.type));
});

test('a finished task sent back to turn 1 with its message replaced: its bash call is listed as done, the session gets the new exchange', async () => {
  const first = await call('POST', '/', {
    body: { message: '[[tool name=bash args={"command":"echo once >> log.txt"}]] write it' },
  });
  expect(first.json.status).toBe('completed');
  const { task_id: id, session } = first.json;
  const r = await call('POST', `/tasks/${id}/rewind`, {
    body: { step: 1, message: '[[say text="changed my mind"]] never mind', replace: true },
  });
  expect(r.status).toBe(200);
  expect(r.json.side_effects).toEqual([
    { tool_call_id: expect.stringMatching(/^call_/), tool: 'bash', step: 1, state: 'completed' },
  ]);
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'changed my mind' });
  const messages = (await call('GET', `/sessions/${session}/messages`)).json.messages.map(
    (m: { content: string }) => m.content,
  );
  expect(messages).toHaveLength(4);
  expect(messages.slice(2)).toEqual(['[[say text="changed my mind"]] never mind', 'changed my mind']);
  // The bash call ran once: the abandoned branch's effect stays, the new branch made none.
  expect((await call('GET', `/sessions/${session}/files/log.txt`)).text).toBe('once\n');
});

test('a finished background task with a callback, rewound: the new branch is delivered under webhook-ids of its own, and the task is listed once', async () => {
  const submit = await call('POST', '/', {
    body: {
      message: '[[tool name=calculate args={"expression":"2 * 3"}]] compute',
      background: true,
      callback: { url: receiver.url('/rewound') },
    },
  });
  const id = submit.json.task_id;
  const ends = () => receiver.accepted('/rewound').filter((d) => String(d.json.type) === 'task.completed');
  await waitUntil('the first end delivered', async () => ends().length === 1);
  const r = await call('POST', `/tasks/${id}/rewind`, { body: { step: 2 } });
  expect(r.status).toBe(200);
  await waitUntil("the new branch's end delivered", async () => ends().length === 2);
  const ids = ends().map((d) => String(d.headers['webhook-id']));
  expect(ids).toEqual([`msg_${id}_end`, `msg_${id}_r1_end`]);
  const listed = (await call('GET', `/tasks?session=${submit.json.session}`)).json.tasks;
  expect(listed.map((t: { task_id: string; status: string }) => [t.task_id, t.status])).toEqual([[id, 'completed']]);
});

test('refusals: a turn not taken is a 422, replace without a message a 422, another account a 404', async () => {
  const done = await call('POST', '/', { body: { message: 'hi' } });
  const id = done.json.task_id;
  const far = await call('POST', `/tasks/${id}/rewind`, { body: { step: 3 } });
  expect(far.status).toBe(422);
  expect(far.json.error.details[0]).toMatchObject({ path: 'body.step', message: 'the task has taken turns up to 1' });
  const bare = await call('POST', `/tasks/${id}/rewind`, { body: { step: 1, replace: true } });
  expect(bare.status).toBe(422);
  expect(bare.json.error.details[0].path).toBe('body.replace');
  expect((await call('POST', `/tasks/${id}/rewind`, { body: { step: 1 }, key: KEY_B })).status).toBe(404);
  expect((await call('POST', `/tasks/${id}/rewind`, { body: { step: 0 } })).status).toBe(400);
});
