// The start thread encrypts what it starts with the gateway's payload keys
// (PAYLOAD_KEYS reaches it in its workerData): Temporal stores the run's input
// and memo as ciphertext, and the service's codec reads them back.
import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { defaultPayloadConverter } from '@temporalio/common';
import { ThreadedStarter } from '../../../src/gateway/start-thread/starter';
import { codecFromKeys } from '../../../src/common/codec/data-converter';
import { createEnv } from '../../workflows/env';

jest.setTimeout(60_000);
const KEYS = `t1:${randomBytes(32).toString('base64')}`;
let env: TestWorkflowEnvironment;
let starter: ThreadedStarter;

beforeAll(async () => {
  env = await createEnv();
  starter = new ThreadedStarter({
    config: { address: env.address, namespace: 'default', logLevel: 'silent', logJson: true, payloadKeys: KEYS },
    logger: pino({ level: 'silent' }),
  });
});
afterAll(async () => {
  await starter?.close();
  await env?.teardown();
});

test('a run started on the thread has its input and memo encrypted under the first key', async () => {
  const workflowId = `wf_${randomUUID()}`;
  const secret = 'a message only the service may read';
  await starter.start({
    workflowType: 'neverWorked',
    deadlineMs: 5000,
    options: {
      workflowId,
      taskQueue: `nobody-${randomUUID()}`,
      args: [{ message: secret }],
      memo: { preview: secret },
    },
  });
  const handle = env.client.workflow.getHandle(workflowId);
  try {
    // env.client has no codec: it sees what Temporal stores.
    const history = await handle.fetchHistory();
    const input = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
    const memo = history.events![0].workflowExecutionStartedEventAttributes!.memo!.fields!.preview;
    for (const p of [input, memo]) {
      expect(Buffer.from(p.metadata!.encoding!).toString()).toBe('binary/encrypted');
      expect(Buffer.from(p.metadata!['encryption-key-id']!).toString()).toBe('t1');
      expect(Buffer.from(p.data!).includes(secret)).toBe(false);
    }
    const [plainInput, plainMemo] = await codecFromKeys(KEYS).decode([input, memo]);
    expect(defaultPayloadConverter.fromPayload(plainInput)).toEqual({ message: secret });
    expect(defaultPayloadConverter.fromPayload(plainMemo)).toBe(secret);
  } finally {
    await handle.terminate();
  }
});
