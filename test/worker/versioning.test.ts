// The worker's Worker Deployment options from WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID: both
// make a versioned worker (PINNED unless a workflow type says otherwise), neither an unversioned
// one, one alone stops the worker at start naming the other.
import { loadConfig, ConfigError } from '../../src/common/config';
import { deploymentOptions } from '../../src/worker/versioning';

const config = (env: Record<string, string>) => loadConfig(env);

test('both: a version of the deployment, pinned by default', () => {
  expect(deploymentOptions(config({ WORKER_DEPLOYMENT_NAME: 'agent-service', WORKER_BUILD_ID: 'abc123' }))).toEqual({
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: 'agent-service', buildId: 'abc123' },
      defaultVersioningBehavior: 'PINNED',
    },
  });
});

test('neither: unversioned', () => {
  expect(deploymentOptions(config({}))).toEqual({});
});

test.each([
  [{ WORKER_DEPLOYMENT_NAME: 'agent-service' }, 'WORKER_BUILD_ID'],
  [{ WORKER_BUILD_ID: 'abc123' }, 'WORKER_DEPLOYMENT_NAME'],
])('one alone (%j) is refused, naming %s', (env, missing) => {
  const err = (() => {
    try {
      deploymentOptions(config(env));
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).issues).toEqual([{ variable: missing, message: expect.stringContaining('go together') }]);
});

test('a name with a separator Temporal uses in version strings is refused by the schema', () => {
  expect(() => config({ WORKER_DEPLOYMENT_NAME: 'agent.service', WORKER_BUILD_ID: 'a:b' })).toThrow(ConfigError);
});
