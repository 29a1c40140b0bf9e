// A request over one of the deployment's limits or choices: a 422 naming the field, the variable
// that sets it, and a code; within them, nothing is refused.
import { loadConfig } from '../../src/common/config';
import { UnprocessableRequestError } from '../../src/common/errors';
import { runRequestSchema } from '../../src/common/contracts/run-request';
import { checkDeploymentLimits } from '../../src/gateway/schemas/deployment-limits';

const config = (env: Record<string, string> = {}) => loadConfig({ MAX_STEPS_CEILING: '50', ...env });

/** The refusal's one detail, or undefined when the request passes. */
function refusal(env: Record<string, string>, body: Record<string, unknown>) {
  try {
    checkDeploymentLimits(config(env), runRequestSchema.parse({ message: 'x', ...body }));
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(UnprocessableRequestError);
    const details = (err as UnprocessableRequestError).details as { path: string; code: string; message: string }[];
    expect(details).toHaveLength(1);
    return details[0];
  }
}

test('max_steps above MAX_STEPS_CEILING', () => {
  expect(refusal({}, { max_steps: 50 })).toBeUndefined();
  expect(refusal({}, { max_steps: 51 })).toEqual({
    path: 'body.max_steps',
    code: 'too_big',
    message: 'may be at most 50 here (MAX_STEPS_CEILING)',
  });
});

test('a tool, or a group with a tool, that BUILTIN_TOOLS does not offer', () => {
  const env = { BUILTIN_TOOLS: 'calculate,bash' };
  expect(refusal(env, { tools: ['calculate', 'bash'] })).toBeUndefined();
  expect(refusal(env, { tools: [] })).toBeUndefined();
  expect(refusal(env, { tools: ['bash', 'current_time'] })).toEqual({
    path: 'body.tools[1]',
    code: 'tool_not_offered',
    message: 'current_time is not offered here (BUILTIN_TOOLS: calculate, bash)',
  });
  expect(refusal(env, { tools: ['computer'] })).toMatchObject({
    path: 'body.tools[0]',
    message: expect.stringMatching(/^str_replace_editor, glob, grep are not offered here/),
  });
  expect(refusal({ BUILTIN_TOOLS: 'none' }, { tools: ['wait'] })?.message).toBe(
    'wait is not offered here (BUILTIN_TOOLS: none)',
  );
});

test('computer.network: allowed by default with bash; refused with SANDBOX_NETWORK=off or without bash', () => {
  expect(refusal({}, { computer: { network: true } })).toBeUndefined();
  expect(refusal({ SANDBOX_NETWORK: 'off' }, { computer: { network: false } })).toBeUndefined();
  expect(refusal({ SANDBOX_NETWORK: 'off' }, { computer: { network: true } })).toEqual({
    path: 'body.computer.network',
    code: 'network_not_offered',
    message: 'commands are given no network here (SANDBOX_NETWORK=off)',
  });
  for (const [env, body] of [
    [{}, { tools: ['calculate', 'glob'] }],
    [{ BUILTIN_TOOLS: 'calculate' }, {}],
  ] as const)
    expect(refusal(env, { ...body, computer: { network: true } })).toMatchObject({
      path: 'body.computer.network',
      code: 'network_without_bash',
    });
});

test('the computer field is strict: an unknown setting is a schema error', () => {
  const r = runRequestSchema.safeParse({ message: 'x', computer: { network: true, gpu: true } });
  expect(r.success).toBe(false);
  expect(runRequestSchema.parse({ message: 'x', computer: {} }).computer).toEqual({ network: false });
});
