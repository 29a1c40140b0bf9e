// The tasks API: status, result, listing, cancellation, metadata, events.
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import {
  eventsQuerySchema,
  listQuerySchema,
  patchTaskSchema,
  resultQuerySchema,
  taskMessageSchema,
  TASK_ID,
} from '../schemas/request';
import { publicView } from '../services/task-views';
import { resumePoint, streamTaskEvents } from '../sse';
import { requireRelay } from './run';
import { deliveriesOf } from '../services/deliveries';
import { ValidationError } from '../../common/errors';
import { knowsStatus, LATEST_VERSION } from '../../common/api-versions';

export function taskId(raw: string): string {
  if (!TASK_ID.test(raw))
    throw ValidationError.at(
      'path.id',
      `malformed task id ${JSON.stringify(raw.slice(0, 80))}: a task id is task_ followed by letters and digits`,
      'invalid_format',
    );
  return raw;
}

export function taskRoutes(deps: GatewayDeps): Router {
  const r = Router();
  r.get('/tasks', async (req, res) => {
    const q = parse(listQuerySchema, req.query, 'query');
    const legacy = !knowsStatus(req.apiVersion ?? LATEST_VERSION, 'input_required');
    res.json(await deps.tasks.list(requireAccount(req), { ...q, ...(legacy && { inputRequiredIsRunning: true }) }));
  });
  r.get('/tasks/:id', async (req, res) => {
    res.json(
      publicView(await deps.tasks.view(requireAccount(req), taskId(req.params.id), { retries: true, fast: true })),
    );
  });
  r.get('/tasks/:id/result', async (req, res) => {
    const q = parse(resultQuerySchema, req.query, 'query');
    res.json(await deps.tasks.result(requireAccount(req), taskId(req.params.id), q.wait));
  });
  r.post('/tasks/:id/cancel', async (req, res) => {
    const view = await deps.tasks.cancel(requireAccount(req), taskId(req.params.id));
    res.status(202).json({ ...publicView(view), cancel_requested: true });
  });
  r.patch('/tasks/:id', async (req, res) => {
    const body = parse(patchTaskSchema, req.body, 'body');
    res.json(publicView(await deps.tasks.patch(requireAccount(req), taskId(req.params.id), body.metadata)));
  });
  r.post('/tasks/:id/messages', async (req, res) => {
    const body = parse(taskMessageSchema, req.body, 'body');
    res.status(202).json(await deps.tasks.sendMessage(requireAccount(req), taskId(req.params.id), body.message));
  });
  r.get('/tasks/:id/deliveries', async (req, res) => {
    const id = taskId(req.params.id);
    await deps.tasks.view(requireAccount(req), id); // ownership (404 for other accounts)
    res.json({ task_id: id, deliveries: await deliveriesOf(deps.client, deps.connection, id) });
  });
  r.get('/tasks/:id/events', async (req, res) => {
    const q = parse(eventsQuerySchema, req.query, 'query');
    const id = taskId(req.params.id);
    await deps.tasks.view(requireAccount(req), id); // ownership (404 for other accounts)
    requireRelay(deps);
    await streamTaskEvents(req, res, deps.subscriber, deps.logger, {
      taskId: id,
      afterSeq: resumePoint(req, q.after),
      heartbeatMs: deps.config.SSE_HEARTBEAT_MS,
      closedAt: () => deps.runEnds.closedAt(id),
      checkAtOpen: true,
      stop: deps.drain?.signal,
    });
  });
  return r;
}
