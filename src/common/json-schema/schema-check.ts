// JSON Schemas users give (final_output.schema, a step's output_schema):
// whether one is a schema at all, whether it keeps to the strict subset that
// structured outputs accept with `strict: true`, and validating answers
// against it. One Ajv instance for the process; compiled validators are kept
// by the schema's text (a run's repairs and a DAG's steps reuse theirs).
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { fieldPath, pointerSegments } from '../field-path';

type Schema = Record<string, unknown>;

export interface SchemaIssue {
  path: string;
  message: string;
  code: string;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;

function compile(schema: Schema): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) {
    fn = ajv.compile(schema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, fn);
  }
  return fn;
}

/** Issues that make `schema` unusable as a JSON Schema (draft-07 meta-schema, references that resolve). */
export function schemaIssues(schema: unknown, path: string): SchemaIssue[] {
  if (!isObject(schema)) return [{ path, message: 'a JSON Schema is an object', code: 'invalid_schema' }];
  if (!ajv.validateSchema(schema)) {
    // The meta-schema's alternatives each report on the same place: one issue per place, its first reason.
    const byPath = new Map<string, SchemaIssue>();
    for (const e of ajv.errors ?? []) {
      const at = fieldPath(path, ...pointerSegments(schema, e.instancePath));
      if (!byPath.has(at))
        byPath.set(at, {
          path: at,
          message: `not a valid JSON Schema: ${e.message ?? 'invalid'}`,
          code: 'invalid_schema',
        });
    }
    return [...byPath.values()];
  }
  try {
    compile(schema);
  } catch (err) {
    return [{ path, message: `not a usable JSON Schema: ${(err as Error).message}`, code: 'invalid_schema' }];
  }
  return [];
}

/**
 * Where `schema` leaves the strict subset: every object must say
 * `additionalProperties: false` and list all its properties in `required`.
 */
export function strictSubsetIssues(schema: Schema, path: string): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const walk = (s: unknown, at: string) => {
    if (!isObject(s)) return;
    const props = isObject(s.properties) ? s.properties : undefined;
    if (s.type === 'object' || props) {
      if (s.additionalProperties !== false)
        issues.push({
          path: at,
          message: 'with strict: true every object needs "additionalProperties": false',
          code: 'not_strict',
        });
      const required = new Set(Array.isArray(s.required) ? s.required : []);
      const missing = Object.keys(props ?? {}).filter((k) => !required.has(k));
      if (missing.length)
        issues.push({
          path: at,
          message: `with strict: true every property is required; not in "required": ${missing.join(', ')}`,
          code: 'not_strict',
        });
    }
    for (const [k, v] of Object.entries(props ?? {})) walk(v, fieldPath(at, 'properties', k));
    if (Array.isArray(s.items)) s.items.forEach((v, i) => walk(v, fieldPath(at, 'items', i)));
    else walk(s.items, fieldPath(at, 'items'));
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((v, i) => walk(v, fieldPath(at, key, i)));
    for (const key of ['$defs', 'definitions'] as const)
      if (isObject(s[key])) for (const [k, v] of Object.entries(s[key] as Schema)) walk(v, fieldPath(at, key, k));
  };
  walk(schema, path);
  return issues;
}

/** The answer's problems against the schema, one line each (empty: it fits). */
export function validationErrors(schema: Schema, value: unknown): string[] {
  const fn = compile(schema);
  if (fn(value)) return [];
  return (fn.errors ?? []).map(describe);
}

/** A request's value against a schema, each problem at its place under `path` (body.input.x), as request issues are. */
export function valueIssues(schema: Schema, value: unknown, path: string): SchemaIssue[] {
  const fn = compile(schema);
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e) => {
    const extra =
      e.keyword === 'additionalProperties' ? [(e.params as { additionalProperty: string }).additionalProperty] : [];
    const at = fieldPath(path, ...pointerSegments(value, e.instancePath), ...extra);
    const message =
      e.keyword === 'additionalProperties' ? 'is not a parameter of the tool' : (e.message ?? 'is not valid');
    return { path: at, message, code: `schema_${e.keyword}` };
  });
}

/** A model's JSON answer: the parsed value when it fits, else its problems and (cut) text to show it. */
export function judgeJson(
  schema: Schema,
  text: string,
  limits: { maxErrors: number; maxText: number },
): { output: unknown } | { errors: string[]; text: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { errors: [`the answer is not JSON (${(err as Error).message})`], text: text.slice(0, limits.maxText) };
  }
  const errors = validationErrors(schema, value).slice(0, limits.maxErrors);
  return errors.length ? { errors, text: text.slice(0, limits.maxText) } : { output: value };
}

function describe(e: ErrorObject): string {
  const where = e.instancePath || '(the root)';
  if (e.keyword === 'additionalProperties')
    return `${where}: unexpected property "${(e.params as { additionalProperty: string }).additionalProperty}"`;
  if (e.keyword === 'enum')
    return `${where}: must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
  return `${where}: ${e.message ?? 'is not valid'}`;
}

function isObject(x: unknown): x is Schema {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
