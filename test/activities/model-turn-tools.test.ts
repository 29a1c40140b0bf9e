// What a model turn tells the model of its tools (offeredSpecs): the built-ins named in the turn's
// input get their specs from the registry, before the other tools' specs, in the order offered;
// a turn scheduled before (every spec in `tools`, no `builtinTools`) is told the same.
import { offeredSpecs } from '../../activities/model-turn';
import { BUILTIN_TOOLS, toolSpec } from '../../workflows/tool-registry';

const mcp = { name: 'srv__echo', description: 'Echoes.', parameters: { type: 'object' } };

test('built-ins by name come first with their registry specs, then the others as given', () => {
  expect(offeredSpecs({ builtinTools: ['calculate', 'web_fetch'], tools: [mcp] })).toEqual([
    toolSpec(BUILTIN_TOOLS.calculate),
    toolSpec(BUILTIN_TOOLS.web_fetch),
    mcp,
  ]);
  // A name this version does not know (a tool since removed) is not offered.
  expect(offeredSpecs({ builtinTools: ['no_such_tool'], tools: [] })).toEqual([]);
});

test('an input of before, every spec in tools, is told as it was', () => {
  const before = [toolSpec(BUILTIN_TOOLS.calculate), mcp];
  expect(offeredSpecs({ tools: before })).toEqual(before);
});
