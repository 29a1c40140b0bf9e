// The callback routes of the OpenAPI document: the account's signing secret
// and a task's deliveries.
import { type Json, jsonBody, operation } from './operations';

export function callbackPaths(taskId: Json): Json {
  return {
    '/tasks/{id}/deliveries': {
      get: operation('get', {
        id: 'listTaskDeliveries',
        tag: 'callbacks',
        summary: "A task's callback deliveries: each one's status, attempts, last answer and next attempt",
        description: 'In delivery order. Empty when the task has no callback or has delivered nothing yet.',
        parameters: [taskId],
        responses: { 200: { description: 'The deliveries.', content: jsonBody('DeliveryList') } },
        errors: { 400: 'A malformed task id.', 404: undefined },
      }),
    },
    '/account/webhook-secret': {
      get: operation('get', {
        id: 'getWebhookSecret',
        tag: 'callbacks',
        summary: "The account's webhook signing secret (made on first read)",
        responses: {
          200: {
            description: 'The secret, and every one deliveries are signed with now.',
            content: jsonBody('WebhookSecret'),
          },
        },
      }),
    },
    '/account/webhook-secret/rotate': {
      post: operation('post', {
        id: 'rotateWebhookSecret',
        tag: 'callbacks',
        summary: 'Make a new signing secret; the old one keeps signing (a second signature) for 24 hours',
        responses: {
          200: { description: 'The new secret, and the old one with its expiry.', content: jsonBody('WebhookSecret') },
        },
      }),
    },
  };
}
