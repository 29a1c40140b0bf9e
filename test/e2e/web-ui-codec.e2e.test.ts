// `ENGINE=temporal-cli npm start` wires the Temporal Web UI to the gateway's
// codec endpoint: the UI's settings name it (token in the path, since the UI
// sends no header of its own), and a call as the browser makes it, from the
// UI's origin, decodes what Temporal stores encrypted.
import { Connection } from '@temporalio/client';
import { startStack, type Stack } from '../../src/dev/launcher/stack';
import { KEY_A, api } from './helpers';

jest.setTimeout(180_000);
let stack: Stack;

beforeAll(async () => {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'TEMPORAL_ADDRESS',
    'REDIS_URL',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'PORT',
    'API_KEYS',
    'DATA_DIR',
    'CODEC_AUTH_TOKEN',
    'CODEC_CORS_ORIGINS',
  ])
    delete base[k];
  stack = await startStack({
    gatewayPort: 0,
    temporalPort: 0,
    demoMcpPort: 0,
    demoWebPort: 0,
    temporalUiPort: 0,
    env: { ...base, ENGINE: 'temporal-cli', API_KEYS: `${KEY_A}:alice`, LOG_LEVEL: 'warn' },
  });
});
afterAll(() => stack?.stop());

test('the UI decodes through the gateway: its settings name the endpoint, and the browser’s calls are allowed', async () => {
  const settings = (await (await fetch(`${stack.temporalUiUrl}/api/v1/settings`)).json()) as {
    Codec: { Endpoint: string };
  };
  const endpoint = settings.Codec.Endpoint;
  expect(endpoint).toBe(`${stack.gatewayUrl}/codec/${stack.env.CODEC_AUTH_TOKEN}`);

  const r = await api(stack)('POST', '/', { body: { message: 'only the key holder reads this' } });
  expect(r.status).toBe(200);
  // The memo as Temporal stores it: encrypted.
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const described = await connection.workflowService.describeWorkflowExecution({
    namespace: 'default',
    execution: { workflowId: r.json.task_id },
  });
  await connection.close();
  const preview = described.workflowExecutionInfo!.memo!.fields!.preview;
  const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
  const asJson = {
    metadata: Object.fromEntries(Object.entries(preview.metadata!).map(([k, v]) => [k, b64(v)])),
    data: b64(preview.data!),
  };
  expect(Buffer.from(asJson.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');

  // What the UI's page does, from its own origin: a preflight, then the POST.
  const origin = new URL(stack.temporalUiUrl!).origin;
  const pre = await fetch(`${endpoint}/decode`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-namespace',
    },
  });
  expect(pre.status).toBe(204);
  expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
  const dec = await fetch(`${endpoint}/decode`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', 'x-namespace': 'default' },
    body: JSON.stringify({ payloads: [asJson] }),
  });
  expect(dec.status).toBe(200);
  expect(dec.headers.get('access-control-allow-origin')).toBe(origin);
  const [decoded] = ((await dec.json()) as { payloads: { data: string }[] }).payloads;
  expect(JSON.parse(Buffer.from(decoded.data, 'base64').toString())).toBe('only the key holder reads this');
});
