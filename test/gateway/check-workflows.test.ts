// A request's workflows checked as graphs at submit (no network).
import { findCycle, workflowIssues } from '../../src/gateway/services/check-workflows';

const step = (id: string, depends_on: string[] = [], extra: object = {}) => ({
  id,
  name: id,
  description: `do ${id}`,
  depends_on,
  ...extra,
});
const wf = (id: string, steps: ReturnType<typeof step>[]) => ({ id, name: id, description: id, steps });

test('a sound graph (fan-out, diamond, fan-in) has no issues', () => {
  expect(
    workflowIssues([
      wf('w', [step('a'), step('b', ['a']), step('c', ['a']), step('d', ['b', 'c'])]),
      wf('v', [step('a')]),
    ]),
  ).toEqual([]);
});

test('duplicates, unknown dependencies, cycles and retry intervals are named by path', () => {
  const issues = workflowIssues([
    wf('w', [
      step('a', ['c']),
      step('b', ['a', 'nope']),
      step('c', ['b']),
      step('a'),
      step('r', [], { retry_policy: { initial_interval: 10, max_interval: 5 } }),
    ]),
    wf('w', [step('x', ['x'])]),
  ]);
  expect(issues.map((i) => [i.path, i.code, i.message])).toEqual([
    ['body.workflows[0].steps[3].id', 'duplicate', 'step id "a" is used by steps[0] of this workflow too'],
    [
      'body.workflows[0].steps[4].retry_policy.max_interval',
      'too_small',
      'max_interval (5 s) is shorter than initial_interval (10 s)',
    ],
    ['body.workflows[0].steps[1].depends_on[1]', 'unknown_step', '"nope" is not a step of workflow "w"'],
    ['body.workflows[0].steps', 'cycle', 'the steps depend on each other in a cycle: a -> c -> b -> a'],
    ['body.workflows[1].id', 'duplicate', 'workflow id "w" is used by workflows[0] too'],
    ['body.workflows[1].steps', 'cycle', 'the steps depend on each other in a cycle: x -> x'],
  ]);
});

test("a step's output_schema must be a JSON Schema", () => {
  const issues = workflowIssues([wf('w', [step('a', [], { output_schema: { type: 'objekt' } })])]);
  expect(issues).toEqual([
    {
      path: 'body.workflows[0].steps[0].output_schema.type',
      code: 'invalid_schema',
      message: expect.stringMatching(/not a valid JSON Schema/),
    },
  ]);
});

test('findCycle returns none for a DAG and a cycle as a closed path', () => {
  expect(
    findCycle([
      { id: 'a', deps: [] },
      { id: 'b', deps: ['a'] },
    ]),
  ).toBeUndefined();
  expect(
    findCycle([
      { id: 'a', deps: ['b'] },
      { id: 'b', deps: ['a'] },
    ]),
  ).toEqual(['a', 'b', 'a']);
});
