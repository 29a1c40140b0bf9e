// The datastores routes of the OpenAPI document (SPEC 2.1's data sources, in
// our design): register, list, describe, delete; a knowledge base's documents.
import { z } from 'zod';
import { type Json, jsonBody, operation, queryParams, ref, toSchema } from './operations';
import {
  DATASTORE_ID,
  DOCUMENT_ID,
  addDocumentsSchema,
  datastoreRegistrationSchema,
  datastoreUploadFieldsSchema,
  documentListQuerySchema,
  documentUploadFieldsSchema,
} from '../schemas/datastore';

const datastoreViewSchema = z.strictObject({
  id: z.string().regex(DATASTORE_ID),
  name: z.string(),
  type: z.enum(['postgres', 'sqlite', 'documents']),
  description: z.string().nullable(),
  allow_sql: z.boolean(),
  query_timeout_ms: z.number().int(),
  max_rows: z.number().int(),
  created_at: z.string().describe('ISO 8601.'),
  uploaded: z.literal(true).optional().describe('sqlite: the service keeps a copy of an uploaded file.'),
  documents: z.number().int().optional().describe('documents: how many it holds.'),
});

const documentInfoSchema = z.strictObject({
  id: z.string(),
  title: z.string(),
  format: z.enum(['text', 'markdown', 'json']),
  chars: z.number().int(),
  created_at: z.string(),
});

const datastoreId = ref('parameters', 'DatastoreId');
const NOT_FOUND = "No such datastore for this account (another account's datastore is one).";
const MALFORMED = 'A malformed datastore id.';
/** A multipart/form-data body: the part `file` (form-data.ts) beside the text fields of `fields`. */
function formBody(fields: z.ZodObject, file: string): Json {
  const json = toSchema(fields) as { properties: Json; required?: string[] };
  const schema = {
    ...json,
    properties: { file: { type: 'string', format: 'binary', description: file }, ...json.properties },
    required: ['file', ...(json.required ?? [])],
  };
  return { 'multipart/form-data': { schema } };
}

export function datastorePaths(): Json {
  return { ...datastoreItemPaths(), ...documentPaths() };
}

/** POST /datastores: a JSON registration, or a SQLite file uploaded beside its fields. */
function registerOperation(): Json {
  const register = operation('post', {
    id: 'registerDatastore',
    tag: 'datastores',
    summary: 'Register a data source: PostgreSQL, a SQLite file (by path or upload), or a documents knowledge base',
    description:
      "The source is opened and asked one question first; one that cannot be opened is a 422 carrying the database's own words. Connection details are secrets: sealed in Temporal, never returned, never logged. To upload a SQLite file, send multipart/form-data: the file as the part named file, the other fields beside it.",
    body: 'RegisterDatastoreRequest',
    responses: { 201: { description: 'Registered.', content: jsonBody('Datastore') } },
    errors: {
      400: 'A body that does not fit this document (a JSON registration, or the fields of an upload).',
      409: 'The account has a datastore of that name.',
      413: 'The upload exceeds DATASTORE_UPLOAD_MAX_BYTES.',
      415: 'Neither JSON nor multipart/form-data (a SQLite file sent as the whole body is told to come as multipart/form-data).',
      422: "A source that cannot be opened (details[0].code unreachable: the database's own words), a path outside DATASTORE_SQLITE_ROOT (not_allowed), an upload that is not a SQLite database (an empty file is not one).",
    },
  });
  withContent(
    register,
    formBody(
      datastoreUploadFieldsSchema,
      'The SQLite database file (the service keeps a copy, deleted with the registration).',
    ),
  );
  return register;
}

/** POST /datastores/{id}/documents: JSON documents, or one document as a file. */
function addDocumentsOperation(): Json {
  const addDocs = operation('post', {
    id: 'addDocuments',
    tag: 'datastores',
    summary: 'Add documents to a documents datastore (an existing id is replaced)',
    description:
      'JSON: one document or {documents: [...]} (at most 100). Or one document as a file: multipart/form-data with the part named file (UTF-8 text) and the fields id, title, format.',
    parameters: [datastoreId],
    body: 'AddDocumentsRequest',
    responses: { 201: { description: 'The documents as stored.', content: jsonBody('DocumentList') } },
    errors: {
      400: 'A malformed id or body.',
      404: NOT_FOUND,
      413: 'A file past DATASTORE_UPLOAD_MAX_BYTES, or JSON past BODY_LIMIT_BYTES.',
      422: 'A datastore that is not a documents one, a document the knowledge base cannot take (format json whose content is not JSON), a file that is not UTF-8 text or is empty.',
    },
  });
  withContent(addDocs, formBody(documentUploadFieldsSchema, 'The document: UTF-8 text.'));
  return addDocs;
}

/** The account's datastores: register, list, describe, delete. */
function datastoreItemPaths(): Json {
  return {
    '/datastores': {
      post: registerOperation(),
      get: operation('get', {
        id: 'listDatastores',
        tag: 'datastores',
        summary: "List the account's datastores (never their connection details)",
        responses: {
          200: { description: 'Every datastore of the account, oldest first.', content: jsonBody('DatastoreList') },
        },
      }),
    },
    '/datastores/{id}': {
      get: operation('get', {
        id: 'getDatastore',
        tag: 'datastores',
        summary: 'A datastore (never its connection details)',
        parameters: [datastoreId],
        responses: { 200: { description: 'The datastore.', content: jsonBody('Datastore') } },
        errors: { 400: MALFORMED, 404: NOT_FOUND },
      }),
      delete: operation('delete', {
        id: 'deleteDatastore',
        tag: 'datastores',
        summary: 'Delete a datastore (an uploaded file or knowledge base goes with it)',
        description: 'Running tasks lose its tools within seconds; later requests naming it are 400s.',
        parameters: [datastoreId],
        responses: { 204: { description: 'Deleted.' } },
        errors: { 400: MALFORMED, 404: NOT_FOUND },
      }),
    },
  };
}

/** A knowledge base's documents: add, list, remove. */
function documentPaths(): Json {
  return {
    '/datastores/{id}/documents': {
      post: addDocumentsOperation(),
      get: operation('get', {
        id: 'listDocuments',
        tag: 'datastores',
        summary: "A knowledge base's documents, by id",
        parameters: [datastoreId, ...queryParams(documentListQuerySchema)],
        responses: { 200: { description: 'One page of documents.', content: jsonBody('DocumentPage') } },
        errors: { 400: 'A malformed id or query.', 404: NOT_FOUND, 422: 'A datastore that is not a documents one.' },
      }),
    },
    '/datastores/{id}/documents/{doc}': {
      delete: operation('delete', {
        id: 'removeDocument',
        tag: 'datastores',
        summary: 'Remove a document from a knowledge base',
        parameters: [
          datastoreId,
          {
            name: 'doc',
            in: 'path',
            required: true,
            description: 'The document id.',
            schema: { type: 'string', pattern: DOCUMENT_ID.source },
          },
        ],
        responses: { 204: { description: 'Removed.' } },
        errors: {
          400: 'A malformed datastore or document id.',
          404: 'No such datastore or document.',
          422: 'A datastore that is not a documents one.',
        },
      }),
    },
  };
}

/** A body that may also come in another content type than JSON (a file). */
function withContent(op: Json, more: Json): void {
  const body = op.requestBody as { content: Json };
  body.content = { ...body.content, ...more };
}

export function datastoreSchemas(): Json {
  return {
    RegisterDatastoreRequest: toSchema(datastoreRegistrationSchema),
    Datastore: toSchema(datastoreViewSchema),
    DatastoreList: toSchema(z.strictObject({ datastores: z.array(datastoreViewSchema) })),
    AddDocumentsRequest: toSchema(addDocumentsSchema),
    DocumentList: toSchema(z.strictObject({ documents: z.array(documentInfoSchema) })),
    DocumentPage: toSchema(
      z.strictObject({ documents: z.array(documentInfoSchema), next_cursor: z.string().nullable() }),
    ),
  };
}

export function datastoreParameters(): Json {
  return {
    DatastoreId: {
      name: 'id',
      in: 'path',
      required: true,
      description: 'A datastore id (ds_…).',
      schema: { type: 'string', pattern: DATASTORE_ID.source },
    },
  };
}
