// Each workflow type's versioning behavior, for a worker that is a version of a Temporal Worker
// Deployment (WORKER_DEPLOYMENT_NAME: docs/operations.md, "Upgrades without stopping agents").
// Declared only when the task is one of a versioned worker (its deployment version has a
// deployment name; an unversioned worker reports a build id alone): the
// server refuses a behavior from an unversioned worker (INVALID_ARGUMENT, "versioning behavior
// cannot be specified without deployment options"), which would fail every workflow task of
// `npm start`, the compose file's default and the tests' engines.
//
// PINNED: a run finishes on the build that started it (and so does every run it continues as, and
// its children: a DAG's steps, its callbacks): a task's code may change from one release to the
// next without a patch, and runs in flight never meet code they did not start with.
// AUTO_UPGRADE: the long-lived records (a session, the accounts, an account's slots and
// datastores) live on across releases, so they move to each new build at their next workflow
// task: a change to their code must replay their histories (the replay test's saved ones), with
// patched() where it would not.
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import type { VersioningBehavior } from '@temporalio/common';
import { agentTask } from './agent-task';
import { agentSession } from './session';
import { accountsRegistry } from './accounts';
import { accountSlots } from './account-slots';
import { callbackDelivery } from './callback-delivery';
import { scheduledRun } from './scheduled-run';
import { dagWorkflow } from './dag-workflow';
import { dagStep } from './dag-step';
import { accountDatastores } from './datastores';

/** Any workflow function, for the loops below (each type's own signature does not matter here). */
type AnyWorkflow = (...args: never[]) => Promise<unknown>;
const pinned: AnyWorkflow[] = [agentTask, callbackDelivery, scheduledRun, dagWorkflow, dagStep];
const autoUpgrade: AnyWorkflow[] = [agentSession, accountsRegistry, accountSlots, accountDatastores];
const when = (versioningBehavior: VersioningBehavior) => () =>
  workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {};
for (const run of pinned) setWorkflowOptions(when('PINNED'), run as never);
for (const record of autoUpgrade) setWorkflowOptions(when('AUTO_UPGRADE'), record as never);
