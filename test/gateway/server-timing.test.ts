// Server-Timing: spans and the total, written just before the response headers.
import http from 'node:http';
import net from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import {
  ServerTiming,
  parseServerTiming as parse,
  serverTiming,
  timed,
} from '../../src/gateway/middleware/server-timing';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('spans that run in parallel each get an entry; total covers them all', async () => {
  const t = new ServerTiming();
  await Promise.all([t.measure('temporal-start', () => sleep(30)), timed(t, 'temporal-session', () => sleep(10))]);
  await t.measure('redis', () => sleep(5)).catch(() => undefined);
  const h = parse(t.header());
  expect(Object.keys(h)).toEqual(['temporal-session', 'temporal-start', 'redis', 'total']);
  expect(h['temporal-start']).toBeGreaterThanOrEqual(25);
  expect(h.total).toBeGreaterThanOrEqual(h['temporal-start'] + h.redis - 1);
});

test('a span that fails is still recorded, and its error passes through', async () => {
  const t = new ServerTiming();
  await expect(t.measure('redis', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  expect(t.header()).toMatch(/^redis;dur=\d+\.\d\d, total;dur=\d+\.\d\d$/);
});

test('the parser reads any Server-Timing header: descriptions, spacing, repeats, entries without a duration', () => {
  expect(parse('db;desc="x";dur=2.5,  cache;dur=0.4, miss, db;dur=1')).toEqual({ db: 2.5, cache: 0.4 });
  expect(parse(undefined)).toEqual({});
});

test('without a request timing, timed just runs the call', async () => {
  await expect(timed(undefined, 'redis', async () => 7)).resolves.toBe(7);
});

test('the middleware puts the header on whatever response the route sends, measured at that moment', async () => {
  const req = new http.IncomingMessage(new net.Socket()) as unknown as Request;
  const res = new http.ServerResponse(req as unknown as http.IncomingMessage) as unknown as Response;
  let nextCalled = false;
  serverTiming()(req, res, (() => (nextCalled = true)) as NextFunction);
  expect(nextCalled).toBe(true);
  await req.timing!.measure('temporal-start', () => sleep(20));
  res.writeHead(202, { 'content-type': 'application/json' });
  const h = parse(String(res.getHeader('server-timing')));
  expect(h['temporal-start']).toBeGreaterThanOrEqual(15);
  expect(h.total).toBeGreaterThanOrEqual(h['temporal-start']);
  expect(res.getHeader('content-type')).toBe('application/json');
});
