// Request schemas of the datastores API (our design: SPEC 2.1 names datastores
// without saying how they come to be). The OpenAPI document is generated from
// these too.
import { z } from 'zod';

export const DATASTORE_ID = /^ds_[0-9a-f]{32}$/;
export const DOCUMENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

const name = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,48}$/, '1-48 letters, digits, _ or -')
  .describe(
    'Unique in the account; a run request names its tools after it by default (describe_<name>, query_<name>, search_<name>).',
  );
const common = {
  name,
  description: z
    .string()
    .max(2000)
    .trim()
    .optional()
    .describe("What the data is; the agent reads it in the tools' descriptions."),
  query_timeout_ms: z
    .number()
    .int()
    .min(100)
    .max(300_000)
    .optional()
    .describe("This datastore's query time limit (default DATASTORE_QUERY_TIMEOUT_MS)."),
  max_rows: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .describe('Rows a query gives the agent at most (default DATASTORE_MAX_ROWS).'),
};
const allowSql = z
  .boolean()
  .default(false)
  .describe(
    "true: the agent also gets query_<name>, running its own read-only SELECT; false: only describe_<name> and the request's named queries.",
  );

export const datastoreRegistrationSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('postgres'),
    connection_url: z
      .string()
      .max(4096)
      .regex(/^postgres(ql)?:\/\/[^/]/, 'a postgres:// or postgresql:// URL')
      .describe(
        'postgres://user:password@host:5432/db[?sslmode=require]. A secret: stored sealed, never returned, never logged. Its host goes through the outbound policy (OUTBOUND_ALLOWLIST for private addresses).',
      ),
    allow_sql: allowSql,
    ...common,
  }),
  z.strictObject({
    type: z.literal('sqlite'),
    path: z
      .string()
      .min(1)
      .max(4096)
      .describe(
        "A SQLite file inside the service's DATASTORE_SQLITE_ROOT (relative to it, or absolute). To register a file of your own, upload it instead (POST /datastores?type=sqlite&name=... with the file as the body).",
      ),
    allow_sql: allowSql,
    ...common,
  }),
  z.strictObject({ type: z.literal('documents'), ...common }),
]);

export type DatastoreRegistration = z.infer<typeof datastoreRegistrationSchema>;

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');

/** An upload's fields, beside its file in a multipart/form-data body (so text on the wire). */
export const datastoreUploadFieldsSchema = z.strictObject({
  name,
  description: common.description,
  allow_sql: bool.default(false).describe('true: the agent also gets query_<name> (its own read-only SELECT).'),
  query_timeout_ms: z.coerce.number().int().min(100).max(300_000).optional(),
  max_rows: z.coerce.number().int().min(1).max(10_000).optional(),
});

export const documentSchema = z.strictObject({
  id: z
    .string()
    .regex(DOCUMENT_ID, '1-128 letters, digits, _ . : or -')
    .optional()
    .describe('Absent: one is made. An existing id is replaced.'),
  title: z.string().max(500).trim().optional(),
  content: z.string().min(1).describe('The text; with format json, a JSON document whose string values are searched.'),
  format: z.enum(['text', 'markdown', 'json']).default('text'),
});

export const addDocumentsSchema = z.union([
  z.strictObject({ documents: z.array(documentSchema).min(1).max(100) }),
  documentSchema,
]);

/** A document sent as a file (multipart/form-data): its fields beside it. */
export const documentUploadFieldsSchema = z.strictObject({
  id: documentSchema.shape.id,
  title: documentSchema.shape.title,
  format: z
    .enum(['text', 'markdown', 'json'])
    .optional()
    .describe(
      'Default: markdown for a file typed text/markdown or named *.md, json for application/json or *.json, else text.',
    ),
});

export const documentListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().regex(DOCUMENT_ID).optional().describe("The previous page's next_cursor."),
});
