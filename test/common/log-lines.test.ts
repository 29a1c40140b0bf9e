// How log records look to a person (no network).
import { prettyRecord, renderLine } from '../../src/common/log-lines';

const rec = {
  level: 'info',
  time: '2026-11-26T12:00:01.234Z',
  pid: 7,
  name: 'gateway',
  msg: 'request',
  method: 'POST',
  path: '/',
  status: 200,
  ms: 12.5,
  task_id: 'task_1',
};

test('pretty: time, process, level, message, then the fields as key=value', () => {
  expect(prettyRecord(rec)).toBe(
    '12:00:01.234 gateway  INFO  request method=POST path=/ status=200 ms=12.5 task_id=task_1',
  );
  expect(prettyRecord(rec, { proc: 'gw' })).toMatch(/^12:00:01\.234 gw {7}INFO {2}request/);
});

test('values with spaces are quoted, objects are JSON, errors show their message, long values are cut', () => {
  const line = prettyRecord({
    level: 40,
    time: 0,
    msg: 'x',
    reason: 'two words',
    detail: { a: 1 },
    err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at y' },
    big: 'z'.repeat(400),
  });
  expect(line).toContain('WARN ');
  expect(line).toContain('reason="two words"');
  expect(line).toContain('detail={"a":1}');
  expect(line).toContain('err=boom');
  expect(line).not.toContain('at y');
  expect(line).toContain(`big=${'z'.repeat(300)}…`);
});

test('renderLine: JSON records in the format asked for, other lines as they are after the process', () => {
  const json = JSON.stringify(rec);
  expect(renderLine(json, 'gateway', 'pretty')).toBe(prettyRecord(rec, { proc: 'gateway' }));
  expect(JSON.parse(renderLine(json, 'gateway', 'json'))).toEqual({ proc: 'gateway', ...rec });
  expect(renderLine('Ready to accept connections', 'redis', 'pretty')).toBe('redis    | Ready to accept connections');
  expect(renderLine('{not json', 'worker', 'json')).toBe('worker   | {not json');
});

test('color only when asked: the level is wrapped in an ANSI color', () => {
  expect(prettyRecord(rec, { color: true })).toContain('\u001b[32mINFO \u001b[0m');
  expect(prettyRecord(rec)).not.toContain('\u001b[');
});
