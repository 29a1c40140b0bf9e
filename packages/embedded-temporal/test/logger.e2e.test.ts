import { spawn } from 'node:child_process';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { createLogger, formatTextLine } from '../src/logger';
import { RawClient } from './conformance/fuzz-tools';
import { waitUntil } from './support/wait-until';

function capture(format: string, level: string) {
  const lines: string[] = [];
  const logger = createLogger({
    format,
    level,
    destination: { write: (s: string) => lines.push(...s.split('\n').filter(Boolean)) },
  });
  return { logger, lines };
}

describe('json format', () => {
  test('one JSON object per record, with ISO time, upper-case level, msg and fields', () => {
    const { logger, lines } = capture('json', 'debug');
    logger.debug({ rpc: 'WorkflowService/StartWorkflowExecution', code: 'OK', ms: 3 }, 'rpc');
    logger.warn(
      { rpc: 'WorkflowService/DescribeNamespace', code: 'NOT_FOUND', error: 'Namespace x is not found.' },
      'rejected request',
    );
    expect(lines).toHaveLength(2);
    const [a, b] = lines.map((l) => JSON.parse(l));
    expect(a).toEqual({
      time: expect.any(String),
      level: 'DEBUG',
      msg: 'rpc',
      rpc: 'WorkflowService/StartWorkflowExecution',
      code: 'OK',
      ms: 3,
    });
    expect(new Date(a.time).toISOString()).toBe(a.time);
    expect(b).toMatchObject({
      level: 'WARN',
      msg: 'rejected request',
      code: 'NOT_FOUND',
      error: 'Namespace x is not found.',
    });
  });

  test('errors are serialised with their message and stack', () => {
    const { logger, lines } = capture('json', 'info');
    logger.error({ err: new Error('boom') }, 'internal error');
    const rec = JSON.parse(lines[0]);
    expect(rec.level).toBe('ERROR');
    expect(rec.err).toMatchObject({ type: 'Error', message: 'boom' });
    expect(rec.err.stack).toContain('boom');
  });
});

describe('pretty / text format', () => {
  test.each(['pretty', 'text'])('%s gives slog-style key=value lines', (format) => {
    const { logger, lines } = capture(format, 'debug');
    logger.warn(
      { rpc: 'WorkflowService/X', code: 'INVALID_ARGUMENT', error: 'Task token not set on request.', ms: 1 },
      'rejected request',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=WARN msg="rejected request" rpc=WorkflowService\/X code=INVALID_ARGUMENT error="Task token not set on request\." ms=1$/,
    );
  });

  test('values are quoted only when they need it', () => {
    expect(
      formatTextLine({
        time: 't',
        level: 'INFO',
        msg: 'started',
        a: 'plain',
        b: '',
        c: 'x=y',
        d: 'say "hi"',
        e: 5,
        f: { k: 1 },
        g: undefined,
      }),
    ).toBe('time=t level=INFO msg=started a=plain b="" c="x=y" d="say \\"hi\\"" e=5 f="{\\"k\\":1}"\n');
  });

  test('unknown formats fall back to text', () => {
    const { logger, lines } = capture('whatever', 'info');
    logger.info('hello');
    expect(lines[0]).toMatch(/ level=INFO msg=hello$/);
  });
});

describe('levels', () => {
  test.each([
    ['debug', ['DEBUG', 'INFO', 'WARN', 'ERROR']],
    ['info', ['INFO', 'WARN', 'ERROR']],
    ['warn', ['WARN', 'ERROR']],
    ['error', ['ERROR']],
    ['never', []],
    ['bogus', ['INFO', 'WARN', 'ERROR']],
  ])('--log-level %s', (level, expected) => {
    const { logger, lines } = capture('json', level);
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(expected);
  });
});

// The launched server: CLI flags pick the format and level; every RPC logs one
// debug line and every rejected one a warn line as well.
describe('server logs, as launched', () => {
  const BIN = path.resolve(__dirname, '../bin/temporal-dev');

  async function withServer(format: string, fn: (address: string) => Promise<void>): Promise<string[]> {
    const child = spawn(
      BIN,
      ['server', 'start-dev', '--port', '0', '--headless', '--log-level', 'debug', '--log-format', format],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const exited = () =>
      child.exitCode !== null || child.signalCode !== null ? `the server exited: ${err}` : undefined;
    try {
      const address = await waitUntil(
        'the server to log its address',
        () => /address[=":]+([\d.]+:\d+)/.exec(err)?.[1],
        { giveUpIf: exited },
      );
      await fn(address);
      // The exercise's last requests (four DescribeNamespace lines) logged before the server stops.
      await waitUntil(
        'the DescribeNamespace lines in the log',
        () => err.split('WorkflowService/DescribeNamespace').length - 1,
        (n) => n >= 4,
        { giveUpIf: exited },
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    return err.split('\n').filter(Boolean);
  }

  async function exercise(address: string): Promise<void> {
    const c = await Connection.connect({ address });
    try {
      await c.workflowService.getSystemInfo({});
      await c.workflowService.describeNamespace({ namespace: 'no-such-namespace' }).catch(() => undefined);
    } finally {
      await c.close();
    }
    const raw = new RawClient(address);
    await raw.call('/temporal.api.workflowservice.v1.WorkflowService/DescribeNamespace', Buffer.from([0x0a, 0x7f]));
    raw.close();
  }

  test('json: one DEBUG line per RPC, one WARN line per rejected request', async () => {
    const lines = (await withServer('json', exercise)).map((l) => JSON.parse(l));
    const rpc = (name: string) => lines.filter((l) => l.rpc === `WorkflowService/${name}`);
    expect(rpc('GetSystemInfo').filter((l) => l.level === 'DEBUG').length).toBeGreaterThanOrEqual(1);
    expect(
      rpc('GetSystemInfo').every(
        (l) => l.level === 'DEBUG' && l.msg === 'rpc' && l.code === 'OK' && typeof l.ms === 'number',
      ),
    ).toBe(true);
    const describe = rpc('DescribeNamespace');
    expect(describe.map((l) => [l.level, l.code])).toEqual([
      ['DEBUG', 'NOT_FOUND'],
      ['WARN', 'NOT_FOUND'],
      ['DEBUG', 'INVALID_ARGUMENT'],
      ['WARN', 'INVALID_ARGUMENT'],
    ]);
    expect(describe[1]).toMatchObject({
      msg: 'rejected request',
      namespace: 'no-such-namespace',
      error: 'Namespace no-such-namespace is not found.',
    });
    expect(describe[3].error).toMatch(/^grpc: error unmarshalling request/);
    expect(lines.some((l) => l.level === 'ERROR')).toBe(false);
  });

  test('pretty: the same lines as key=value text', async () => {
    const lines = await withServer('pretty', exercise);
    const describe = lines.filter((l) => l.includes('rpc=WorkflowService/DescribeNamespace'));
    expect(describe).toHaveLength(4);
    expect(describe[0]).toMatch(
      /^time=\S+ level=DEBUG msg=rpc rpc=WorkflowService\/DescribeNamespace namespace=no-such-namespace code=NOT_FOUND ms=\d+$/,
    );
    expect(describe[1]).toMatch(
      / level=WARN msg="rejected request" .*code=NOT_FOUND .*error="Namespace no-such-namespace is not found\."/,
    );
  });
});
