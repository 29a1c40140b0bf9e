// scripts/cluster.sh's settings against the compose file's (src/dev/cluster/settings.ts beside
// temporal-docker/docker-compose.yml): one set of variables for one service, so that a variable
// cannot exist in one deployment and not the other. Every variable the cluster sets is one of the
// configuration schema's; every variable the compose file gives a gateway or a worker reaches the
// cluster's gateway or worker from the caller's environment; where both give a default, it is the same.
import { gatewaySettings, sharedSettings, workerSettings, CLUSTER_OWNED } from '../../src/dev/cluster/settings';
import { environmentOf, SCHEMA_VARIABLES } from './compose-files';

const addresses = {
  temporalAddress: '127.0.0.1:17233',
  redisUrl: 'redis://127.0.0.1:16379',
  payloadKeys: 'k1:AAAA',
  modelUrl: 'http://127.0.0.1:18787/v1',
  dataDir: '/tmp/cluster',
};

function clusterOf(role: 'gateway' | 'worker', host: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const shared = sharedSettings(host, addresses);
  return role === 'worker'
    ? workerSettings(shared, { metricsPort: 19464, buildId: 'b1', modelUrl: addresses.modelUrl })
    : gatewaySettings(shared, 18080, [19464]);
}

describe.each(['gateway', 'worker'] as const)('the cluster’s %s', (role) => {
  test('sets only variables of the configuration schema', () => {
    const unknown = Object.keys(clusterOf(role, {})).filter((k) => !SCHEMA_VARIABLES.has(k));
    expect(unknown).toEqual([]);
  });

  test("gets every variable the compose file gives it, from the caller's environment or its own", () => {
    const composeKeys = Object.keys(environmentOf(role));
    // Each compose variable set in the caller's environment to a value of its own.
    const host = Object.fromEntries(composeKeys.map((k) => [k, `from-host-${k}`]));
    const env = clusterOf(role, host);
    for (const k of composeKeys) {
      const owned = (CLUSTER_OWNED as readonly string[]).includes(k);
      // A variable the cluster owns (addresses, keys, the listening host) is its own; any other is the caller's.
      expect({ k, value: env[k] }).toEqual({ k, value: owned ? expect.any(String) : host[k] });
    }
  });

  test('gives the compose file’s defaults where both have one', () => {
    const compose = environmentOf(role);
    const env = clusterOf(role, {});
    const sameDefault = ['TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'LOG_LEVEL', 'LOG_FORMAT', 'API_KEYS'];
    for (const k of sameDefault.filter((v) => compose[v] !== undefined && compose[v] !== ''))
      expect({ k, value: env[k] }).toEqual({ k, value: compose[k] });
  });
});
