// kill -9 of the worker while the model is mid-answer, streamed token by token
// and in blocks, in a plain run and in a DAG step: the retried turn asks the
// model afresh (an OpenAI-compatible model answers a trailing partial answer
// in full, which doubled the output), so the result holds the answer once; a
// token stream says which text is void (agent_retract) before the new answer,
// and a reader that drops it has the answer once; seqs stay gap-free.
import { KEY_A, readSse, SseEvent, useStack, waitUntil } from './helpers';
import { fillerWords } from '../../src/dev/scripted-model/text';

jest.setTimeout(180_000);
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
const call: typeof ctx.call = (...args) => ctx.call(...args);

const WORDS = 60;
const ANSWER = fillerWords(WORDS);
/** 60 words, 60 ms apart: 3.6 s of answer, time enough to kill the worker in the middle. */
const SLOW = `[[slow delay=60 tokens=${WORDS}]]`;
type Mode = 'tokens' | 'blocks';
type Ev = SseEvent['data'];

/** The scripted model's requests whose last user message contains `marker`, since `since`. */
function requestsWith(since: number, marker: string) {
  return ctx
    .stack()
    .model!.received()
    .filter(
      (r) =>
        r.at >= since &&
        (r.body.messages as { role: string; content: unknown }[]).some(
          (m) => m.role === 'user' && String(m.content).includes(marker),
        ),
    );
}

/** The answer text a reader keeps for one step tag (undefined: the task's own turns): agent_response less what an agent_retract voided. */
function visibleText(events: Ev[], stepId?: string): string {
  const mine = events.filter((e) => e.step_id === stepId);
  const voided = new Set<number>();
  for (const r of mine.filter((e) => e.type === 'agent_retract'))
    for (const e of mine) if (e.seq >= r.from_seq && e.seq < r.seq) voided.add(e.seq);
  return mine
    .filter((e) => e.type === 'agent_response' && !voided.has(e.seq))
    .map((e) => e.content)
    .join('');
}

/**
 * Starts a background run, reads its stream, kills the worker once `due` says so (given the
 * events so far), starts a new one, and returns the stream's events and the task's result.
 */
async function killMidAnswer(body: object, due: (events: Ev[]) => boolean): Promise<{ events: Ev[]; result: any }> {
  const r = await call('POST', '/', { body: { ...body, background: true } });
  expect(r.status).toBe(202);
  const id = r.json.task_id;
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${id}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  const seen: Ev[] = [];
  const reading = readSse(res, (ev) => {
    seen.push(ev.data);
    return ev.data.type === 'agent_completed' || ev.data.type === 'agent_error';
  });
  await waitUntil('the kill point mid-answer', () => due(seen), { timeoutMs: 60_000, stepMs: 20 });
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const events = (await reading).map((e) => e.data);
  const result = await call('GET', `/tasks/${id}/result?wait=60`);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  return { events, result: result.json };
}

/** Kill point: 15 tokens of the answer on the stream (tokens), or 1.2 s into the model's answer (blocks: nothing is streamed before it ends). */
function midAnswer(mode: Mode, marker: string, since: number, stepId?: string): (events: Ev[]) => boolean {
  if (mode === 'tokens')
    return (events) => events.filter((e) => e.type === 'agent_response' && e.step_id === stepId).length >= 15;
  return () => {
    const asked = requestsWith(since, marker)[0];
    return asked !== undefined && Date.now() - asked.at > 1200;
  };
}

/** What the stream must show: with tokens, one agent_retract voiding the first attempt's text; in blocks, one whole answer. */
function expectOneAnswer(mode: Mode, events: Ev[], stepId?: string): void {
  const mine = events.filter((e) => e.step_id === stepId);
  const retracts = mine.filter((e) => e.type === 'agent_retract');
  if (mode === 'tokens') {
    const firstStart = mine.find((e) => e.type === 'agent_response_start')!;
    expect(retracts).toEqual([expect.objectContaining({ from_seq: firstStart.seq, attempt: 2 })]);
  } else {
    expect(retracts).toEqual([]);
    expect(mine.filter((e) => e.type === 'agent_response')).toHaveLength(1);
  }
  expect(visibleText(events, stepId)).toBe(ANSWER);
}

test.each<Mode>(['tokens', 'blocks'])(
  'kill -9 of the worker mid-answer (%s): the result and the stream hold the answer once',
  async (mode) => {
    const since = Date.now();
    const marker = `plain-${mode}-${since}`;
    const { events, result } = await killMidAnswer(
      { message: `${SLOW} ${marker}`, streaming_tokens: mode === 'tokens' },
      midAnswer(mode, marker, since),
    );
    expect(result.status).toBe('completed');
    expect(result.output).toBe(ANSWER);
    expectOneAnswer(mode, events);
    // The retry asked the model afresh: its last message is the user's, not the partial answer.
    const asked = requestsWith(since, marker);
    expect(asked).toHaveLength(2);
    expect((asked[1].body.messages as { role: string }[]).at(-1)!.role).toBe('user');
  },
);

test.each<Mode>(['tokens', 'blocks'])(
  "kill -9 of the worker mid-answer of a DAG step (%s): the step's output is its answer once, and so is what its dependent reads",
  async (mode) => {
    const since = Date.now();
    const marker = `dag-${mode}-${since}`;
    const steps = [
      { id: 'k', name: 'step k', description: `write ${SLOW} ${marker}`, depends_on: [] },
      { id: 'after', name: 'step after', description: `use it ${marker}-after`, depends_on: ['k'] },
    ];
    const body = {
      message: 'plan',
      streaming_tokens: mode === 'tokens',
      workflows: [{ id: 'w', name: 'w', description: 'one slow step', steps }],
    };
    const { events, result } = await killMidAnswer(body, midAnswer(mode, marker, since, 'k'));
    expect(result.status).toBe('completed');
    expectOneAnswer(mode, events, 'k');
    const prompt = String(
      (requestsWith(since, `${marker}-after`)[0].body.messages as { role: string; content: unknown }[]).find(
        (m) => m.role === 'user',
      )!.content,
    );
    expect(prompt.split('\n')).toContainEqual(`- step k (k): ${ANSWER}`);
  },
);
