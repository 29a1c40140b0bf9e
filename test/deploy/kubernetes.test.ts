// deploy/kubernetes/ checked offline (nothing here runs a Kubernetes cluster): every document
// validates against the Kubernetes API's schemas (kubernetes-models, which carries them), every
// variable is one of the configuration schema's, each container gets the variables the compose
// file gives the same service, the gateway starts with its Node flags, and the grace periods cover
// the drains they must let finish.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { GATEWAY_NODE_FLAGS } from '../../src/dev/launcher/node-flags';
import { loadConfig } from '../../src/common/config';
import { DEFAULTS, environmentOf, SCHEMA_VARIABLES } from '../temporal-docker/compose-files';

const DIR = path.join(__dirname, '../../deploy/kubernetes');
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  Deployment,
  StatefulSet,
  ConfigMap,
  Secret,
  Service,
  PodDisruptionBudget,
};

interface Doc {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: any;
}

const docs: { file: string; doc: Doc }[] = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    YAML.parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8')).map((d) => ({ file, doc: d.toJS() as Doc })),
  );

const find = (kind: string, name: string) => docs.find((d) => d.doc.kind === kind && d.doc.metadata.name === name)!.doc;
const config = find('ConfigMap', 'agent-service');
const secret = find('Secret', 'agent-service');
const container = (deployment: string) => find('Deployment', deployment).spec.template.spec.containers[0];

/** A container's variables: its own, the config map's it takes whole, the secret's it names. */
function variablesOf(c: any): string[] {
  const own = (c.env ?? []).map((e: { name: string }) => e.name);
  const fromConfig = (c.envFrom ?? []).some((e: any) => e.configMapRef?.name === 'agent-service')
    ? Object.keys(config.data!)
    : [];
  return [...new Set([...own, ...fromConfig])];
}

test('every document is a valid Kubernetes object of a kind the deployment uses', () => {
  expect(docs.length).toBeGreaterThanOrEqual(9);
  for (const { file, doc } of docs) {
    const Model = MODELS[doc.kind];
    expect({ file, kind: doc.kind, known: Boolean(Model) }).toEqual({ file, kind: doc.kind, known: true });
    expect(() => new Model(doc as never).validate()).not.toThrow();
  }
});

test('the validation refuses what Kubernetes would (the check can fail)', () => {
  const bad = structuredClone(find('Deployment', 'agent-service-gateway')) as any;
  bad.spec.replicas = 'two';
  expect(() => new Deployment(bad).validate()).toThrow();
});

test('every variable is one of the configuration schema’s', () => {
  const names = [
    ...Object.keys(config.data!),
    ...Object.keys(secret.stringData!),
    ...variablesOf(container('agent-service-gateway')),
    ...variablesOf(container('agent-service-worker-0-1-0')),
  ];
  expect(names.filter((n) => !SCHEMA_VARIABLES.has(n))).toEqual([]);
});

test.each([
  ['gateway', 'agent-service-gateway'],
  ['worker', 'agent-service-worker-0-1-0'],
])('the %s gets every variable the compose file gives it', (service, deployment) => {
  const have = new Set(variablesOf(container(deployment)));
  // The model's address and names: compose's scripted model only (a cluster sets its provider's).
  const composeOnly = new Set(['OPENAI_BASE_URL', 'MODEL_FLASH', 'MODEL_BASE', 'MODEL_MAX']);
  const missing = Object.keys(environmentOf(service)).filter((k) => !have.has(k) && !composeOnly.has(k));
  expect(missing).toEqual([]);
});

test('secrets come from the Secret, never from the config map or a literal', () => {
  for (const name of ['PAYLOAD_KEYS', 'API_KEYS', 'OPENAI_API_KEY', 'CODEC_AUTH_TOKEN'])
    expect(Object.keys(config.data!)).not.toContain(name);
  for (const d of ['agent-service-gateway', 'agent-service-worker-0-1-0'])
    for (const e of container(d).env ?? [])
      if (['PAYLOAD_KEYS', 'API_KEYS', 'OPENAI_API_KEY', 'CODEC_AUTH_TOKEN'].includes(e.name))
        expect({ name: e.name, from: e.valueFrom?.secretKeyRef?.name }).toEqual({
          name: e.name,
          from: 'agent-service',
        });
});

test('the gateway starts with its Node flags, listens on all interfaces, and probes /readyz and /healthz', () => {
  const c = container('agent-service-gateway');
  expect(c.command.slice(1, c.command.indexOf('-r'))).toEqual([...GATEWAY_NODE_FLAGS]);
  expect(c.env.find((e: { name: string }) => e.name === 'HOST').value).toBe('0.0.0.0');
  expect(c.ports[0].containerPort).toBe(DEFAULTS.PORT);
  expect(c.readinessProbe.httpGet.path).toBe('/readyz');
  expect(c.livenessProbe.httpGet.path).toBe('/healthz');
});

test('grace periods cover the drains: the gateway’s preStop pause and GATEWAY_DRAIN_MS, the worker’s forced stop', () => {
  const gateway = find('Deployment', 'agent-service-gateway').spec.template.spec;
  const preStop = gateway.containers[0].lifecycle.preStop.sleep.seconds;
  expect(gateway.terminationGracePeriodSeconds).toBeGreaterThan(preStop + DEFAULTS.GATEWAY_DRAIN_MS / 1000);
  // src/worker/main.ts: shutdownForceTime 15 s.
  expect(
    find('Deployment', 'agent-service-worker-0-1-0').spec.template.spec.terminationGracePeriodSeconds,
  ).toBeGreaterThan(15);
});

test('each Deployment has a PodDisruptionBudget selecting its pods, and the worker is a versioned build', () => {
  for (const component of ['gateway', 'worker']) {
    const pdb = docs.find(
      (d) =>
        d.doc.kind === 'PodDisruptionBudget' &&
        d.doc.spec.selector.matchLabels['app.kubernetes.io/component'] === component,
    );
    expect({ component, pdb: Boolean(pdb) }).toEqual({ component, pdb: true });
  }
  const worker = container('agent-service-worker-0-1-0');
  expect(config.data!.WORKER_DEPLOYMENT_NAME).toBeTruthy();
  expect(worker.env.find((e: { name: string }) => e.name === 'WORKER_BUILD_ID').value).toMatch(/^[A-Za-z0-9_-]+$/);
});

test.each(['agent-service-gateway', 'agent-service-worker-0-1-0'])(
  '%s: its settings (the config map and its own values) load as the service loads them',
  (deployment) => {
    const literal = Object.fromEntries(
      (container(deployment).env ?? [])
        .filter((e: { value?: string }) => e.value !== undefined)
        .map((e: { name: string; value: string }) => [e.name, e.value]),
    );
    expect(() => loadConfig({ ...config.data, ...literal })).not.toThrow();
  },
);
