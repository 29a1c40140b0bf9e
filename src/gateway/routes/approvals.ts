// Approval gates: a task's gated tool calls, and a person's decision on one (docs/approvals.md).
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import { approvalDecisionSchema, TOOL_CALL_ID } from '../schemas/request';
import { ValidationError } from '../../common/errors';
import { taskId } from './tasks';

function toolCallId(raw: string): string {
  if (!TOOL_CALL_ID.test(raw))
    throw ValidationError.at(
      'path.tool_call_id',
      `malformed tool call id ${JSON.stringify(raw.slice(0, 80))}: 1-128 letters, digits and _ . : -`,
      'invalid_format',
    );
  return raw;
}

export function approvalRoutes(deps: GatewayDeps): Router {
  const r = Router();
  r.get('/tasks/:id/approvals', async (req, res) => {
    res.json(await deps.approvals.list(requireAccount(req), taskId(req.params.id)));
  });
  r.post('/tasks/:id/approvals/:tool_call_id', async (req, res) => {
    const id = taskId(req.params.id);
    const callId = toolCallId(req.params.tool_call_id);
    const body = parse(approvalDecisionSchema, req.body, 'body');
    res.json(await deps.approvals.decide(requireAccount(req), id, { tool_call_id: callId, ...body }));
  });
  return r;
}
