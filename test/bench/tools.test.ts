// The MCP phase's clock: one entry per tool-call message, stamped at its last delta, only while on.
import { ToolCallClock } from '../../bench/tools';
import { parseOptions } from '../../bench/main';

describe('bench MCP phase', () => {
  it('stamps the last delta of each tool-call message, and nothing while off', () => {
    const clock = new ToolCallClock();
    clock.onDelta({ tool_calls: [{ index: 0, id: 'call_0', function: { name: 'bench__echo', arguments: '' } }] });
    expect(clock.ends).toEqual([]);
    clock.on = true;
    clock.onDelta({ content: 'not a tool call' });
    clock.onDelta({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'bench__echo', arguments: '' } }] });
    const first = clock.ends[0];
    clock.onDelta({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] });
    clock.onDelta({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] });
    clock.onDelta({ tool_calls: [{ index: 0, id: 'call_2', function: { name: 'bench__echo', arguments: '' } }] });
    expect(clock.ends).toHaveLength(2);
    expect(clock.ends[0]).toBeGreaterThanOrEqual(first);
    expect(clock.ends[1]).toBeGreaterThanOrEqual(clock.ends[0]);
    expect(Math.abs(clock.ends[1] - Date.now())).toBeLessThan(1000);
  });

  it('is a default phase, selectable alone, with its call count', () => {
    expect(parseOptions([], {}).phases.has('mcp')).toBe(true);
    const o = parseOptions(['--phases', 'mcp', '--mcp-calls=40'], {});
    expect([...o.phases]).toEqual(['mcp']);
    expect(o.mcpCalls).toBe(40);
    expect(parseOptions([], {}).mcpCalls).toBe(200);
  });
});
