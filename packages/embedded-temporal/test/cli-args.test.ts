import { parseArgs, UsageError } from '../src/cli-args';

// What sdk-core's ephemeral-server launcher passes to `temporal server start-dev`.
function sdkArgs(port: number, extra: string[] = [], ui: string[] = ['--headless']): string[] {
  return [
    'server',
    'start-dev',
    '--port',
    String(port),
    '--namespace',
    'default',
    '--ip',
    '127.0.0.1',
    '--log-format',
    'pretty',
    '--log-level',
    'warn',
    '--dynamic-config-value',
    'frontend.enableServerVersionCheck=false',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    ...ui,
    ...extra,
  ];
}

function usageError(argv: string[]): string {
  try {
    parseArgs(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

describe('start-dev, as the SDK launches it', () => {
  test('the full default argument list', () => {
    const a = parseArgs(sdkArgs(17001));
    expect(a).toEqual({
      mode: 'dev',
      port: 17001,
      ip: '127.0.0.1',
      namespace: 'default',
      namespaces: ['default'],
      logFormat: 'pretty',
      logLevel: 'warn',
      uiRequested: false,
      dynamicConfig: {
        'frontend.enableServerVersionCheck': false,
        'frontend.enableUpdateWorkflowExecution': true,
        'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
      },
      searchAttributes: {},
      extraArgs: [],
    });
  });

  test('--db-filename, a UI port instead of --headless, and extra args (search attributes)', () => {
    const a = parseArgs(
      sdkArgs(
        17002,
        [
          '--db-filename',
          '/tmp/x.db',
          '--search-attribute',
          'CustomKeyword=Keyword',
          '--search-attribute',
          'CustomInt=int',
        ],
        ['--ui-port', '18002'],
      ),
    );
    expect(a.dbFilename).toBe('/tmp/x.db');
    expect(a.uiRequested).toBe(true);
    expect(a.uiPort).toBe(18002);
    expect(a.searchAttributes).toEqual({ CustomKeyword: 'Keyword', CustomInt: 'Int' });
  });

  test('a non-default namespace, json logs and debug level', () => {
    const argv = sdkArgs(17003).map((v) => (v === 'pretty' ? 'json' : v === 'warn' ? 'debug' : v));
    argv[argv.indexOf('--namespace') + 1] = 'ns-a';
    const a = parseArgs(argv);
    expect(a.namespace).toBe('ns-a');
    expect(a.namespaces).toEqual(['default', 'ns-a']);
    expect(a.logFormat).toBe('json');
    expect(a.logLevel).toBe('debug');
  });
});

describe('start-dev flag forms and values', () => {
  test('defaults without flags', () => {
    const a = parseArgs(['server', 'start-dev']);
    expect(a.port).toBe(7233);
    expect(a.ip).toBe('127.0.0.1');
    expect(a.namespaces).toEqual(['default']);
    expect(a.uiRequested).toBe(true);
    expect(a.dbFilename).toBeUndefined();
  });

  test('--flag=value, short flags, repeated --namespace, localhost', () => {
    const a = parseArgs([
      'server',
      'start-dev',
      '--port=7300',
      '-n',
      'a',
      '--namespace=b',
      '-n',
      'a',
      '-f',
      'db.file',
      '--ip=localhost',
      '--headless=true',
    ]);
    expect(a.port).toBe(7300);
    expect(a.namespaces).toEqual(['default', 'a', 'b']);
    expect(a.namespace).toBe('a');
    expect(a.dbFilename).toBe('db.file');
    expect(a.ip).toBe('127.0.0.1');
    expect(a.uiRequested).toBe(false);
    expect(parseArgs(['server', 'start-dev', '-p', '0']).port).toBe(0);
  });

  test('global flags may come before the subcommand', () => {
    const a = parseArgs(['--log-level', 'error', 'server', '--log-format', 'text', 'start-dev', '--headless']);
    expect(a.logLevel).toBe('error');
    expect(a.logFormat).toBe('text');
  });

  test('dynamic config values are JSON', () => {
    const a = parseArgs([
      'server',
      'start-dev',
      '--dynamic-config-value',
      'a.b=3',
      '--dynamic-config-value',
      'c="x=y"',
      '--dynamic-config-value',
      'd={"k":[1]}',
    ]);
    expect(a.dynamicConfig).toEqual({ 'a.b': 3, c: 'x=y', d: { k: [1] } });
  });

  test('search attribute types match case-insensitively to the canonical name', () => {
    const a = parseArgs([
      'server',
      'start-dev',
      ...['keywordlist', 'DATETIME', 'Text', 'double', 'bool'].flatMap((t, i) => ['--search-attribute', `A${i}=${t}`]),
    ]);
    expect(a.searchAttributes).toEqual({ A0: 'KeywordList', A1: 'Datetime', A2: 'Text', A3: 'Double', A4: 'Bool' });
  });

  test('CLI flags we have no use for are accepted with their values', () => {
    const a = parseArgs([
      'server',
      'start-dev',
      '--http-port',
      '7243',
      '--metrics-port',
      '7244',
      '--ui-ip',
      '0.0.0.0',
      '--ui-public-path',
      '/x',
      '--ui-asset-path',
      '/a',
      '--ui-codec-endpoint',
      'http://c',
      '--sqlite-pragma',
      'journal_mode=wal',
      '--log-config',
      '--ui-disable-news-fetch',
      '--env',
      'prod',
      '--color',
      'never',
      '--headless',
    ]);
    expect(a.port).toBe(7233);
    expect(a.uiRequested).toBe(false);
  });

  test('--log-level never and every accepted format', () => {
    expect(parseArgs(['server', 'start-dev', '--log-level', 'never']).logLevel).toBe('never');
    for (const f of ['json', 'pretty', 'text'])
      expect(parseArgs(['server', 'start-dev', '--log-format', f]).logFormat).toBe(f);
  });
});

describe('start-dev mistakes are usage errors', () => {
  test.each([
    [['server', 'start-dev', '--bogus'], /unknown flag: --bogus/],
    [['server', 'start-dev', '--port'], /needs an argument: --port/],
    [['server', 'start-dev', '--port', 'abc'], /invalid --port "abc"/],
    [['server', 'start-dev', '--port', '70000'], /invalid --port "70000"/],
    [['server', 'start-dev', '--ui-port', '-1'], /invalid --ui-port/],
    [['server', 'start-dev', '--log-level', 'verbose'], /invalid log level "verbose"/],
    [['server', 'start-dev', '--log-format', 'xml'], /invalid log format "xml"/],
    [['server', 'start-dev', '--dynamic-config-value', 'novalue'], /missing expected '='/],
    [['server', 'start-dev', '--dynamic-config-value', 'k=not json'], /invalid JSON value for key "k"/],
    [['server', 'start-dev', '--search-attribute', 'Foo'], /missing expected '='/],
    [['server', 'start-dev', '--search-attribute', 'Foo=String'], /invalid search attribute value type "String"/],
    [['server', 'start-dev', '--namespace', ''], /non-empty/],
    [['server', 'start-dev', '--headless=maybe'], /invalid boolean/],
    [['server', 'start-dev', 'extra'], /unexpected arguments: server start-dev extra/],
    [['server'], /usage:/],
    [[], /usage:/],
  ])('%j', (argv, message) => {
    expect(usageError(argv as string[])).toMatch(message);
  });
});

describe('time-skipping test server form', () => {
  test('<port> alone', () => {
    const a = parseArgs(['17100']);
    expect(a.mode).toBe('time-skipping');
    expect(a.port).toBe(17100);
    expect(a.namespaces).toEqual(['default']);
    expect(a.uiRequested).toBe(false);
    expect(a.extraArgs).toEqual([]);
  });

  test('<port> with extra args keeps them', () => {
    const a = parseArgs(['17101', '--enable-time-skipping', 'x']);
    expect(a.mode).toBe('time-skipping');
    expect(a.port).toBe(17101);
    expect(a.extraArgs).toEqual(['--enable-time-skipping', 'x']);
  });

  test('an out-of-range port is a usage error', () => {
    expect(usageError(['99999'])).toMatch(/invalid port "99999"/);
  });
});
