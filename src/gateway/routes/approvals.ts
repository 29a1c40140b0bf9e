// A person in the loop of a task: its gated tool calls and a decision on one (docs/approvals.md),
// and a rewind to an earlier model turn (docs/rewind.md).
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import { approvalDecisionSchema, rewindSchema, TOOL_CALL_ID } from '../schemas/request';
import { UnprocessableRequestError, ValidationError } from '../../common/errors';
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
  r.post('/tasks/:id/rewind', async (req, res) => {
    const id = taskId(req.params.id);
    const body = parse(rewindSchema, req.body, 'body');
    // The document takes replace alone; the rewind cannot carry it out (nothing to replace with).
    if (body.replace && body.message === undefined)
      throw UnprocessableRequestError.at('body.replace', 'replace needs a message to replace with', 'missing_message');
    res.json(await deps.rewinds.rewind(requireAccount(req), id, body));
  });
  return r;
}
