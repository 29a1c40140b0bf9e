// The gateway's Express app (createApp) on a port-0 HTTP server, with stand-in
// dependencies: enough for the middleware in front of the routes (auth, body
// parsing, the codec endpoint), which is what these tests exercise.
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/common/config';
import { createApp, type GatewayDeps } from '../../src/gateway/app';
import { gatewayServer } from '../../src/gateway/gateway-server';
import type { AccountDirectory } from '../../src/common/accounts/registry';
import { AesGcmPayloadCodec } from '../../src/common/codec/aes-gcm-codec';

export const API_KEY = 'key-alice-0123456789';
/** A second account's key (bob), for what one account may not see of another's. */
export const API_KEY_B = 'key-bob-0123456789';

export interface ServedApp {
  url: string;
  codec: AesGcmPayloadCodec;
  close(): Promise<void>;
}

/** `services` builds services the routes under test call, from the app's config (none: the middleware alone). */
export async function serveApp(
  env: Record<string, string> = {},
  services: (config: Config) => Partial<GatewayDeps> = () => ({}),
): Promise<ServedApp> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const codec = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }]);
  const accounts = {
    lookup: async (key: string) =>
      key === API_KEY ? { account: 'alice' } : key === API_KEY_B ? { account: 'bob' } : undefined,
  } as unknown as AccountDirectory;
  const app = createApp({
    config,
    logger: pino({ level: 'silent' }),
    accounts,
    payloadCodec: codec,
    ...services(config),
  } as unknown as GatewayDeps);
  const server = gatewayServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    codec,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
