// The load balancer in front of the cluster's gateways: HAProxy (Debian's package), round robin
// over the gateways that answer /readyz, streams (SSE) passed through unbuffered and long-lived.
import { ensureCommand } from '../launcher/processes';

export function ensureHaproxy(log: (line: string) => void): string {
  return ensureCommand({ bin: 'haproxy', pkg: 'haproxy', orElse: 'to run the cluster’s load balancer' }, log);
}

/**
 * HAProxy's configuration. A gateway is taken out after two failed /readyz checks a second apart
 * (it answers 503 while it drains, or not at all once it died) and back in after one good one. A
 * request that could not be sent to a gateway at all (connection refused) is sent to another
 * (`retries` + `redispatch`): nothing had reached the dead one. Timeouts: streams stay open for
 * hours (a task's SSE), so the server and client timeouts are long; the gateway sends keep-alive
 * comments on idle streams.
 */
export function haproxyConfig(port: number, gateways: { name: string; port: number }[]): string {
  const servers = gateways.map(
    (g) =>
      `  server ${g.name} 127.0.0.1:${g.port} check inter 1s fall 2 rise 1 observe layer4 error-limit 1 on-error mark-down`,
  );
  return [
    '# Written by scripts/cluster.sh (src/dev/cluster/load-balancer.ts); rewritten at each `up`.',
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  option httplog',
    '  option redispatch',
    '  retries 3',
    '  timeout connect 2s',
    '  timeout client 2h',
    '  timeout server 2h',
    '  timeout tunnel 2h',
    '  timeout http-request 30s',
    'frontend gateways',
    `  bind 127.0.0.1:${port}`,
    '  default_backend gateway',
    'backend gateway',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    ...servers,
    '',
  ].join('\n');
}
