// The tool registry's names: MCP tools as <server>__<tool>, sanitised and kept
// unique (never clashing with built-ins or transfers), transfer tools per
// handoff agent, and what the model is offered with an agent active.
import { handoffToolName, nameMcpTools, offeredTools, sanitizeToolName } from '../../workflows/tool-registry';

test('names are sanitised to what Chat Completions accepts, at most 64 characters', () => {
  expect(sanitizeToolName('weather.v2 / get forecast')).toBe('weather_v2___get_forecast');
  expect(sanitizeToolName('a'.repeat(80))).toHaveLength(64);
  expect(sanitizeToolName('')).toBe('_');
  expect(handoffToolName('Billing Team')).toBe('transfer_to_Billing_Team');
});

test('MCP tools get unique namespaced names with their description and schema intact', () => {
  const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
  const tools = nameMcpTools(
    [
      { server: 'web', tools: [{ name: 'search', description: 'Searches', inputSchema: schema }, { name: 'se arch' }] },
      { server: 'web.', tools: [{ name: 'search' }] },
    ],
    ['web__se_arch_9'],
  );
  expect(tools.map((t) => t.name)).toEqual(['web__search', 'web__se_arch', 'web___search']);
  expect(tools[0]).toEqual({
    server: 'web',
    tool: 'search',
    name: 'web__search',
    description: 'Searches',
    inputSchema: schema,
  });
  expect(tools[1]).toMatchObject({ tool: 'se arch', description: '', inputSchema: { type: 'object', properties: {} } });
  // A clash with a reserved name or another tool gets a numbered suffix, still within 64 characters.
  const long = 'x'.repeat(70);
  const clash = nameMcpTools(
    [{ server: 's', tools: [{ name: long }, { name: long }, { name: 'calculate' }] }],
    ['s__calculate'],
  );
  expect(clash.map((t) => t.name.length)).toEqual([64, 64, 14]);
  expect(new Set(clash.map((t) => t.name)).size).toBe(3);
  expect(clash[1].name.endsWith('_2')).toBe(true);
  expect(clash[2].name).toBe('s__calculate_2');
});

test('the offer: built-ins, MCP tools, then a transfer to each agent but the active one', () => {
  const mcp = nameMcpTools([{ server: 'srv', tools: [{ name: 'echo' }] }], []);
  const agents = [
    { name: 'billing', description: 'Invoices' },
    { name: 'support', description: 'Problems' },
  ];
  const main = offeredTools(['calculate', 'nope'], mcp, agents);
  expect(main.map((t) => [t.name, t.kind])).toEqual([
    ['calculate', 'activity'],
    ['srv__echo', 'mcp'],
    ['transfer_to_billing', 'handoff'],
    ['transfer_to_support', 'handoff'],
  ]);
  expect(main[2].description).toContain('Invoices');
  expect(offeredTools([], mcp, agents, 'billing').map((t) => t.name)).toEqual(['srv__echo', 'transfer_to_support']);
});
