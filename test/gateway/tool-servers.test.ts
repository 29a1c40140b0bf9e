// Submit-time checks of MCP servers and handoff agents: both auth kinds become a
// bearer token; names that would clash and URLs the outbound policy refuses are
// a 422 naming each entry (a name resolving to loopback included; `localhost`
// resolves from the hosts file); a DNS failure for now is no refusal.
import { UnprocessableRequestError } from '../../src/common/errors';
import { OutboundPolicy } from '../../src/common/outbound/policy';
import { checkToolServers } from '../../src/gateway/schemas/tool-servers';
import { agentsOf, mcpServersOf } from '../../src/common/tasks/request-tools';

const server = (serverName: string, serverUrl = 'https://mcp.example.com/mcp') => ({ serverName, serverUrl });
const publicDns = new OutboundPolicy('', async () => [{ address: '93.184.216.34', family: 4 }]);

async function issues(
  req: Parameters<typeof checkToolServers>[0],
  policy = publicDns,
): Promise<{ path: string; code: string; message: string }[]> {
  const err = await checkToolServers(req, policy).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) return [];
  expect(err).toBeInstanceOf(UnprocessableRequestError);
  return (err as UnprocessableRequestError).details as { path: string; code: string; message: string }[];
}

test('auth of both kinds becomes one bearer token; either spelling of the field', () => {
  expect(mcpServersOf({ mcp_servers: [{ ...server('a'), auth: { type: 'bearer', token: 't1' } }] })).toEqual([
    { name: 'a', url: 'https://mcp.example.com/mcp', token: 't1' },
  ]);
  expect(
    mcpServersOf({ mcpServers: [{ ...server('b'), auth: { type: 'oauth', oauth: { accessToken: 't2' } } }] }),
  ).toEqual([{ name: 'b', url: 'https://mcp.example.com/mcp', token: 't2' }]);
  expect(mcpServersOf({ mcp_servers: [server('c')] })).toEqual([{ name: 'c', url: 'https://mcp.example.com/mcp' }]);
  expect(mcpServersOf({})).toBeUndefined();
  expect(agentsOf({ agents: [{ name: 'x', description: 'y' }] })).toEqual([{ name: 'x', description: 'y' }]);
});

test('clashing server names, clashing or reserved agent names are named', async () => {
  expect(await issues({ mcp_servers: [server('web'), server('web')] })).toEqual([
    expect.objectContaining({ path: 'body.mcp_servers[1].serverName', code: 'duplicate' }),
  ]);
  expect(await issues({ mcpServers: [server('a b'), server('a_b')] })).toEqual([
    expect.objectContaining({ path: 'body.mcpServers[1].serverName' }),
  ]);
  const agents = await issues({
    agents: [
      { name: 'main', description: 'x' },
      { name: 'ops team', description: 'x' },
      { name: 'ops_team', description: 'x' },
    ],
  });
  expect(agents.map((i) => [i.path, i.code])).toEqual([
    ['body.agents[0].name', 'reserved'],
    ['body.agents[2].name', 'duplicate'],
  ]);
  expect(await issues({ mcp_servers: [server('a'), server('b')], agents: [{ name: 'x', description: 'y' }] })).toEqual(
    [],
  );
});

test('each refused URL is named: IP literals, a name resolving to loopback, link-local, a scheme', async () => {
  const none = new OutboundPolicy('');
  const got = await issues(
    {
      mcp_servers: [
        server('private', 'http://192.168.1.10/mcp'),
        server('local', 'http://localhost:3001/mcp'),
        server('metadata', 'http://169.254.169.254/latest/meta-data'),
        server('files', 'file:///etc/passwd'),
        server('ok', 'http://10.0.0.7/mcp'),
      ],
    },
    new OutboundPolicy('10.0.0.0/8'),
  );
  expect(got.map((i) => i.path)).toEqual([
    'body.mcp_servers[0].serverUrl',
    'body.mcp_servers[1].serverUrl',
    'body.mcp_servers[2].serverUrl',
    'body.mcp_servers[3].serverUrl',
  ]);
  expect(got[1].message).toContain('MCP server "local"');
  expect(got[1].message).toMatch(/loopback/);
  expect(got[2].message).toMatch(/link-local/);
  expect(got[3].message).toContain('file:');
  expect((await issues({ mcp_servers: [server('local', 'http://127.0.0.1/mcp')] }, none))[0].code).toBe(
    'outbound_refused',
  );
});

test('a DNS failure for now is not a refusal: the worker checks again when it connects', async () => {
  const flaky = new OutboundPolicy('', async () => {
    throw Object.assign(new Error('try again'), { code: 'EAI_AGAIN' });
  });
  expect(await issues({ mcp_servers: [server('later')] }, flaky)).toEqual([]);
});
