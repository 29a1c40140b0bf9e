// The parts of a run request that zod cannot check field by field: its
// workflows as graphs and the JSON Schemas it gives (final_output.schema,
// steps' output_schema). All problems go into one 400, each with its path.
import { ValidationError } from '../errors';
import { workflowIssues } from '../dag/check-workflows';
import { SchemaIssue, schemaIssues, strictSubsetIssues } from '../json-schema/schema-check';
import type { RunRequest } from './schemas';

export function checkStructure(req: Pick<RunRequest, 'workflows' | 'final_output'>): void {
  const issues: SchemaIssue[] = [...(req.workflows ? workflowIssues(req.workflows) : []), ...finalOutputIssues(req.final_output)];
  if (issues.length) throw ValidationError.of(issues);
}

function finalOutputIssues(fo: RunRequest['final_output']): SchemaIssue[] {
  if (!fo) return [];
  const path = 'body.final_output.schema';
  const invalid = schemaIssues(fo.schema, path);
  if (invalid.length) return invalid;
  // Structured outputs answer an object at the root.
  if (fo.schema.type !== 'object') return [{ path: `${path}.type`, message: 'the final output is an object: its schema needs "type": "object"', code: 'invalid_schema' }];
  return fo.strict ? strictSubsetIssues(fo.schema, path) : [];
}
