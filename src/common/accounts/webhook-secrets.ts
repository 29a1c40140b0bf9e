// An account's webhook signing secrets, kept in the accounts registry workflow
// (so every gateway and worker signs with the same ones, and a restart keeps
// them). The first read makes one; a rotation makes a new one and keeps the
// old one signing for 24 hours.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { WebhookSecret } from '../../../workflows/accounts';
import { AccountsRegistry } from './registry';
import { newWebhookSecret } from '../callbacks/signature';
import {
  ACCOUNTS_WORKFLOW_ID,
  rotateWebhookSecretUpdate,
  webhookSecretsQuery,
  webhookSecretsUpdate,
} from '../../../workflows/definitions';

export class WebhookSecrets {
  private readonly registry: AccountsRegistry;

  constructor(
    private readonly client: Client,
    taskQueue: string,
  ) {
    this.registry = new AccountsRegistry(client, taskQueue);
  }

  /** The secrets in force, newest first (one is made when the account has none). */
  async inForce(account: string): Promise<WebhookSecret[]> {
    // A query while the account has some (no history written); the update only to make the first.
    const known = await this.handle()
      .query(webhookSecretsQuery, account)
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return [];
        throw err;
      });
    if (known.length) return known;
    await this.registry.ensure();
    return this.handle().executeUpdate(webhookSecretsUpdate, { args: [{ account, candidate: newWebhookSecret() }] });
  }

  async rotate(account: string): Promise<WebhookSecret[]> {
    await this.registry.ensure();
    return this.handle().executeUpdate(rotateWebhookSecretUpdate, {
      args: [{ account, candidate: newWebhookSecret() }],
    });
  }

  private handle() {
    return this.client.workflow.getHandle(ACCOUNTS_WORKFLOW_ID);
  }
}
