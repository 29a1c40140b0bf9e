// The service settings the cluster pass brings its cluster up with: the e2e suites' keys and a
// loopback allowlist (callbacks to the test's receiver), short heartbeats so that a killed
// worker's calls go to the other one within seconds.
import { cleanEnv, KEY_A, KEY_B } from '../e2e/helpers';

export function clusterTestEnv(): NodeJS.ProcessEnv {
  return {
    ...cleanEnv(),
    API_KEYS: `${KEY_A}:alice,${KEY_B}:bob`,
    LOG_LEVEL: 'info',
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    SSE_HEARTBEAT_MS: '1000',
    MODEL_HEARTBEAT_TIMEOUT_MS: '5000',
    CALLBACK_RETRY_DELAYS: Array(30).fill('500ms').join(','),
    CALLBACK_TIMEOUT_MS: '2000',
    // Four background tasks of an account at once: core.cluster.test.ts fills bob's slots through both gateways.
    MAX_RUNNING_TASKS_PER_ACCOUNT: '4',
  };
}
