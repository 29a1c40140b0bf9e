// Three days of a daily cron schedule pass in virtual time: the whole service
// runs on the embedded engine's time-skipping server, and the test lets three
// days go by. Skipped under ENGINE=temporal-cli, whose time-skipping server
// (the official Java one) serves no schedules: there, schedules.test.ts covers
// the same three days by a backfill on the real dev server.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { api, Api, startTestStack } from './helpers';
import type { Stack } from '../../src/dev/launcher/stack';
import { JAVA_TEST_SERVER, timeSkippingEnv } from '../engine';
import { DAY, threeMorningsOfCron } from './cron-days';

jest.setTimeout(180_000);

let env: TestWorkflowEnvironment;
let stack: Stack;
let call: Api;

(JAVA_TEST_SERVER ? describe.skip : describe)('on the time-skipping server', () => {
  beforeAll(async () => {
    env = await timeSkippingEnv();
    // Session and slot watches far apart: three virtual days hold no idle timers to wake for.
    stack = await startTestStack({ TEMPORAL_ADDRESS: env.address, RUN_WATCH_MS: String(DAY) });
    call = api(stack);
  });
  afterAll(async () => {
    await stack?.stop();
    await env?.teardown();
  });

  test('a daily cron schedule in Europe/Paris starts three tasks over three days, each at 09:00 Paris time', async () => {
    await threeMorningsOfCron(call, () => env.sleep(3 * DAY));
  });
});
