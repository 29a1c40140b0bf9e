// Every workflow the worker registers.
export { agentTask } from './agent-task';
export { agentSession } from './session';
export { accountsRegistry } from './accounts';
export { accountSlots } from './account-slots';
export { callbackDelivery } from './callback-delivery';
export { scheduledRun } from './scheduled-run';
export { dagWorkflow } from './dag-workflow';
export { dagStep } from './dag-step';
export { accountDatastores } from './datastores';
// Their versioning behaviors (a worker that is a deployment's version reads them).
import './versioning';
