// The schedules API (SPEC 2.5's "cancel the schedule", and what users of a
// scheduler expect besides): list, describe, pause, unpause, trigger, delete.
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import { SCHEDULE_ID, scheduleListQuerySchema, schedulePauseSchema } from '../schemas/request';
import { ValidationError } from '../../common/errors';

function scheduleId(raw: string): string {
  if (!SCHEDULE_ID.test(raw))
    throw ValidationError.at(
      'path.id',
      `malformed schedule id ${JSON.stringify(raw.slice(0, 80))}: a schedule id is sched_ followed by letters and digits`,
      'invalid_format',
    );
  return raw;
}

export function scheduleRoutes({ schedules }: GatewayDeps): Router {
  const r = Router();
  r.get('/schedules', async (req, res) => {
    const q = parse(scheduleListQuerySchema, req.query, 'query');
    res.json(await schedules.list(requireAccount(req), q));
  });
  r.get('/schedules/:id', async (req, res) => {
    res.json(await schedules.describe(requireAccount(req), scheduleId(req.params.id)));
  });
  r.delete('/schedules/:id', async (req, res) => {
    await schedules.delete(requireAccount(req), scheduleId(req.params.id));
    res.status(204).end();
  });
  r.post('/schedules/:id/pause', async (req, res) => {
    const body = parse(schedulePauseSchema, req.body ?? {}, 'body');
    res.json(await schedules.pause(requireAccount(req), scheduleId(req.params.id), body.note));
  });
  r.post('/schedules/:id/unpause', async (req, res) => {
    res.json(await schedules.unpause(requireAccount(req), scheduleId(req.params.id)));
  });
  r.post('/schedules/:id/trigger', async (req, res) => {
    const id = scheduleId(req.params.id);
    await schedules.trigger(requireAccount(req), id);
    res.status(202).json({ schedule_id: id, triggered: true });
  });
  return r;
}
