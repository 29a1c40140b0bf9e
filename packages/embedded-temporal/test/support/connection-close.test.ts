// A connection closed while a call waits out its retry backoff: the call ends with its last
// status instead of its next attempt throwing 'Channel has been shut down' from a timer (which
// left the call's promise unsettled for good and failed whichever test file ran next).
import { Connection } from '@temporalio/client';
import { installConnectionCloseGuard } from './connection-close';
import { freePort } from './free-port';

installConnectionCloseGuard();

test('a call retrying against a server that is gone settles when its connection closes', async () => {
  // Nothing listens on the port: every attempt is refused at once (UNAVAILABLE) and retried
  // after a backoff of 100 ms and more, so the close below lands in one of those waits.
  const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
  const call = connection.workflowService.describeNamespace({ namespace: 'default' });
  const settled = call.then(
    () => 'answered',
    (err) => err,
  );
  await new Promise((r) => setTimeout(r, 300));
  await connection.close();
  expect(await settled).toMatchObject({ code: 14 });
});

test('a connection given its own interceptors is left as it is', async () => {
  const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
  // No retry interceptor at all: the refused call fails on its first attempt.
  await expect(connection.workflowService.describeNamespace({ namespace: 'default' })).rejects.toMatchObject({
    code: 14,
  });
  await connection.close();
});
