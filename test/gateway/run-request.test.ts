// The run request's schema where it is more than a shape (no network).
import { runRequestSchema } from '../../src/common/contracts/run-request';

test("mode: fast (Agentbase's name) and base (the SPEC's) are one mode, the default", () => {
  const mode = (m?: string) => runRequestSchema.parse({ message: 'x', ...(m !== undefined && { mode: m }) }).mode;
  expect([mode('fast'), mode('base'), mode(), mode('flash'), mode('max')]).toEqual([
    'base',
    'base',
    'base',
    'flash',
    'max',
  ]);
  const bad = runRequestSchema.safeParse({ message: 'x', mode: 'turbo' });
  expect(bad.error?.issues[0].message).toMatch(/"flash"\|"base"\|"fast"\|"max"/);
});
