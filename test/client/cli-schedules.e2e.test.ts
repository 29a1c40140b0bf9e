// The `agent` CLI's schedules (bin/agent as a child process, as a user runs
// it): `agent run --schedule` and the [scheduled] lines of a run, `agent
// schedules`, `agent schedule <id>` and its actions (--pause, --unpause,
// --trigger, --delete), and `agent tasks --schedule`. Cron schedules far from
// now, so nothing runs but the one trigger. One stack for the file.
import { AgentClient, NotFoundError } from '../../client';
import { KEY_A, scheduleRunClosed, useStack, waitUntil } from '../e2e/helpers';
import { cliRunner, lines, TIME, type Run } from './cli-process';

jest.setTimeout(90_000);
const ctx = useStack();
const cli = cliRunner(() => ctx.stack().gatewayUrl);
let agent: AgentClient;
beforeAll(() => {
  agent = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
});

const SCHED = 'sched_[0-9a-f]{32}';

/** Waits until GET /schedules lists `id` (a new schedule may take a moment to be listed). */
const listed = (id: string) =>
  waitUntil(`schedule ${id} listed`, async () =>
    (await agent.schedules.list({ limit: 100 })).schedules.some((s) => s.schedule_id === id),
  );

test('bad usage: two actions, --note without --pause, --timezone without --schedule; one line and the usage, exit 2', async () => {
  const [two, three, note, tz, missing, general] = await Promise.all([
    cli(['schedule', 'sched_x', '--pause', '--delete']),
    cli(['schedule', 'sched_x', '--unpause', '--trigger', '--delete']),
    cli(['schedule', 'sched_x', '--note', 'why']),
    cli(['run', 'hi', '--timezone', 'Europe/Paris']),
    cli(['schedule']),
    cli(['--help']),
  ]);
  const usage = (r: Run, cmd: string, why: string) => {
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(lines(r.stderr)).toEqual([
      `agent ${cmd}: ${why}`,
      expect.stringMatching(new RegExp(`^usage: agent ${cmd} `)),
    ]);
  };
  usage(two, 'schedule', 'give at most one of --pause, --unpause, --trigger, --delete, got --pause and --delete');
  usage(
    three,
    'schedule',
    'give at most one of --pause, --unpause, --trigger, --delete, got --unpause and --trigger and --delete',
  );
  usage(note, 'schedule', '--note goes with --pause');
  usage(tz, 'run', '--timezone goes with --schedule');
  usage(missing, 'schedule', 'missing argument');
  for (const cmd of ['schedules', 'schedule']) expect(general.stdout).toMatch(new RegExp(`^  ${cmd} +\\S`, 'm'));
});

test('run --background --schedule: the task id on stdout, [scheduled] on stderr; schedules lists it; schedule shows, pauses, unpauses and deletes it', async () => {
  const bg = await cli([
    'run',
    'set it up',
    '--background',
    '--schedule',
    '30 6 1 1 *',
    '--timezone',
    'Europe/Paris',
    '--schedule-message',
    'happy new year',
  ]);
  expect(bg.code).toBe(0);
  const taskId = bg.stdout.trim();
  expect(taskId).toMatch(/^task_\w+$/);
  // 06:30 in Paris on the 1st of January is 05:30 UTC (no summer time then).
  const [scheduled] = lines(bg.stderr);
  expect(lines(bg.stderr)).toEqual([
    expect.stringMatching(new RegExp(`^\\[scheduled\\] ${SCHED} next \\d{4}-01-01 05:30:00 UTC$`)),
  ]);
  const id = /sched_\w+/.exec(scheduled)![0];
  const { session } = await agent.tasks.get(taskId);

  await listed(id);
  const table = await cli(['schedules', '--limit', '100']);
  expect(table.code).toBe(0);
  expect(lines(table.stdout)[0]).toMatch(/^SCHEDULE +WHEN +NEXT RUN \(UTC\) +STATE +SESSION$/);
  expect(table.stdout).toMatch(
    new RegExp(`^${id} +30 6 1 1 \\* \\(Europe/Paris\\) +\\d{4}-01-01 05:30:00 +active +${session}$`, 'm'),
  );
  const json = JSON.parse((await cli(['schedules', '--limit', '100', '--json'])).stdout);
  expect(json.schedules).toContainEqual(
    expect.objectContaining({ schedule_id: id, session, timezone: 'Europe/Paris', message_preview: 'happy new year' }),
  );

  const shown = await cli(['schedule', id]);
  expect(shown).toMatchObject({ code: 0, stderr: '' });
  expect(lines(shown.stdout)).toEqual([
    `schedule     ${id}`,
    `session      ${session}`,
    'when         30 6 1 1 * (Europe/Paris)',
    'overlap      skip',
    'state        active',
    'message      happy new year',
    expect.stringMatching(new RegExp(`^created      ${TIME}$`)),
    ...Array.from({ length: 5 }, (_, i) =>
      expect.stringMatching(new RegExp(`^${i ? ' '.repeat(12) : 'next runs   '} \\d{4}-01-01 05:30:00 UTC$`)),
    ),
    'runs         0',
    'running      -',
    'recent tasks -',
  ]);

  const paused = await cli(['schedule', id, '--pause', '--note', 'on holiday']);
  expect(paused.code).toBe(0);
  expect(paused.stdout).toMatch(/^state +paused \(note: on holiday\)$/m);
  expect((await agent.schedules.get(id)).paused).toBe(true);
  await waitUntil("the CLI's listing to show the schedule paused", async () =>
    /^\S+ .+ paused /m.test(
      (await cli(['schedules', '--limit', '100'])).stdout.split('\n').find((l) => l.startsWith(id)) ?? '',
    ),
  );
  const unpaused = JSON.parse((await cli(['schedule', id, '--unpause', '--json'])).stdout);
  expect(unpaused).toMatchObject({ schedule_id: id, paused: false });

  const deleted = await cli(['schedule', id, '--delete']);
  expect(deleted).toEqual({
    code: 0,
    stdout: `deleted: ${id} (it starts no more tasks; its tasks stay)\n`,
    stderr: '',
  });
  expect(await cli(['schedule', id])).toEqual({
    code: 1,
    stdout: '',
    stderr: 'error: not_found: schedule not found (HTTP 404)\n',
  });
});

test('run --schedule streams [scheduled] before the answer; --json has agent_scheduled right after agent_started; schedules pages with a cursor hint', async () => {
  const [plain, json] = await Promise.all([
    cli(['run', 'now and later', '--schedule', '0 0 1 1 *']),
    cli(['run', 'as json', '--json', '--schedule', '0 12 25 12 *', '--schedule-message', 'merry christmas']),
  ]);
  expect(plain.code).toBe(0);
  expect(plain.stdout).toBe('You said: now and later\n');
  const [scheduled, ...rest] = lines(plain.stderr);
  expect(scheduled).toMatch(new RegExp(`^\\[scheduled\\] ${SCHED} next \\d{4}-01-01 00:00:00 UTC$`));
  expect(rest.at(-1)).toMatch(/^\[cost\] /);
  const events = lines(json.stdout).map((l) => JSON.parse(l));
  expect(events.slice(0, 2)).toEqual([
    expect.objectContaining({ type: 'agent_started' }),
    expect.objectContaining({
      type: 'agent_scheduled',
      schedules: [
        {
          schedule_id: expect.stringMatching(new RegExp(`^${SCHED}$`)),
          next_run_at: expect.stringMatching(/-12-25T12:00:00(\.000)?Z$/),
        },
      ],
    }),
  ]);
  const ids = [/sched_\w+/.exec(scheduled)![0], events[1].schedules[0].schedule_id as string];
  expect((await agent.schedules.get(ids[1])).message_preview).toBe('merry christmas');

  for (const id of ids) await listed(id);
  const page = await cli(['schedules', '--limit', '1']);
  expect(page.code).toBe(0);
  expect(lines(page.stdout)).toHaveLength(2);
  const cursor = /^more: agent schedules --limit 1 --cursor (\S+)$/.exec(page.stderr.trim())?.[1];
  expect(cursor).toBeDefined();
  const next = await cli(['schedules', '--limit', '1', '--cursor', cursor!]);
  expect(next.code).toBe(0);
  expect(lines(next.stdout)[1].split(/ +/)[0]).not.toBe(lines(page.stdout)[1].split(/ +/)[0]);
  for (const id of ids) await agent.schedules.delete(id);
});

test('schedule --trigger starts a task now; tasks --schedule lists it and schedule shows it among its recent tasks', async () => {
  const accepted = await agent.runBackground({
    message: 'set up',
    schedules: [{ schedule: '0 0 1 1 *', message: 'triggered by hand' }],
  });
  const id = accepted.schedules![0].schedule_id;
  const trigger = await cli(['schedule', id, '--trigger']);
  expect(trigger).toEqual({
    code: 0,
    stdout: `triggered: ${id}; a task of it starts now: agent tasks --schedule ${id}\n`,
    stderr: '',
  });

  const taskId = await waitUntil(
    "the triggered task in the schedule's listing",
    async () => (await agent.tasks.list({ schedule: id })).tasks[0]?.task_id,
    { stepMs: 200 },
  );
  expect(await agent.tasks.result(taskId, { wait: 30 })).toMatchObject({
    status: 'completed',
    session: accepted.session,
    output: 'You said: triggered by hand',
  });
  await waitUntil(
    'the triggered task completed in the listing',
    async () => (await agent.tasks.list({ schedule: id })).tasks[0]?.status === 'completed',
  );

  const tasks = await cli(['tasks', '--schedule', id]);
  expect(tasks).toMatchObject({ code: 0, stderr: '' });
  expect(lines(tasks.stdout)).toEqual([
    expect.stringMatching(/^TASK +STATUS +CREATED \(UTC\) +SESSION +MESSAGE$/),
    expect.stringMatching(new RegExp(`^${taskId} +completed +${TIME} +${accepted.session} +triggered by hand$`)),
  ]);
  const shown = await cli(['schedule', id]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(/^runs +1$/m);
  expect(shown.stdout).toMatch(new RegExp(`^recent tasks ${taskId}  due ${TIME}, started ${TIME}$`, 'm'));
  expect(shown.stderr).toBe(`all its tasks: agent tasks --schedule ${id}\n`);
  // The schedule's first run closed (its task did; the run closes a moment after): a trigger within
  // the second of a run still going starts nothing (docs/api.md, Schedules).
  await scheduleRunClosed(ctx.stack(), id);
  const triggerJson = JSON.parse((await cli(['schedule', id, '--trigger', '--json'])).stdout);
  expect(triggerJson).toEqual({ schedule_id: id, triggered: true });
  await waitUntil(
    'the second triggered task listed',
    async () => (await agent.tasks.list({ schedule: id })).tasks.length === 2,
    { stepMs: 200 },
  );
  const second = (await agent.tasks.list({ schedule: id })).tasks.find((t) => t.task_id !== taskId)!;
  await agent.tasks.result(second.task_id, { wait: 30 });
  // The next page's hint repeats the filters: a cursor goes with the query that made it.
  const paged = await cli(['tasks', '--schedule', id, '--limit', '1']);
  expect(lines(paged.stdout)).toHaveLength(2);
  expect(paged.stderr).toMatch(new RegExp(`^more: agent tasks --schedule ${id} --limit 1 --cursor \\S+\n$`));

  const deleted = JSON.parse((await cli(['schedule', id, '--delete', '--json'])).stdout);
  expect(deleted).toEqual({ schedule_id: id, deleted: true });
  await expect(agent.schedules.get(id)).rejects.toBeInstanceOf(NotFoundError);
});
