// The parts of a run request that no schema checks field by field: its
// workflows as graphs and the JSON Schemas it gives (final_output.schema,
// steps' output_schema). The request fits the document, so its problems are a
// 422, each with its path.
import { UnprocessableRequestError } from '../../common/errors';
import { workflowIssues } from '../services/check-workflows';
import { SchemaIssue, schemaIssues, strictSubsetIssues } from '../../common/json-schema/schema-check';
import type { RunRequest } from '../../common/contracts/run-request';

export function checkStructure(req: Pick<RunRequest, 'workflows' | 'final_output'>): void {
  const issues: SchemaIssue[] = [
    ...(req.workflows ? workflowIssues(req.workflows) : []),
    ...finalOutputIssues(req.final_output),
  ];
  if (issues.length) throw UnprocessableRequestError.of(issues);
}

/** Its root being an object is the request schema's rule (schemas.ts); what it says beyond that is checked here. */
function finalOutputIssues(fo: RunRequest['final_output']): SchemaIssue[] {
  if (!fo) return [];
  const path = 'body.final_output.schema';
  const invalid = schemaIssues(fo.schema, path);
  if (invalid.length) return invalid;
  return fo.strict ? strictSubsetIssues(fo.schema, path) : [];
}
