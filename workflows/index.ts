// Every workflow the worker registers.
export { agentTask } from './agent-task';
export { agentSession } from './session';
export { accountsRegistry } from './accounts';
export { accountSlots } from './account-slots';
export { callbackDelivery } from './callback-delivery';
export { scheduledRun } from './scheduled-run';
