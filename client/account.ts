// client.account: the account's webhook signing secret for callbacks, and its rotation.
import type { HttpCore, RequestOptions } from './http';
import type { WebhookSecret } from './types';

export class Account {
  constructor(private readonly core: HttpCore) {}

  /** The secret deliveries are signed with (made on first read), and any old one still signing. */
  webhookSecret(opts: RequestOptions = {}): Promise<WebhookSecret> {
    return this.core.json('GET', '/account/webhook-secret', opts);
  }

  /** A new secret; the old one keeps signing (a second signature) for 24 hours. */
  rotateWebhookSecret(opts: RequestOptions = {}): Promise<WebhookSecret> {
    return this.core.json('POST', '/account/webhook-secret/rotate', opts);
  }
}
