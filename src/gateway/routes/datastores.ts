// The datastores API: register (a PostgreSQL URL, a SQLite file by path or
// upload, a documents knowledge base), list, describe, delete; add, list and
// remove the documents of a knowledge base. Files arrive as multipart/form-data
// (uploadRoutes, mounted before the JSON body parser); everything else is JSON.
import express, { Router, type Request } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import { UnprocessableRequestError, UnsupportedMediaTypeError, ValidationError } from '../../common/errors';
import { fieldPath } from '../../common/field-path';
import {
  DATASTORE_ID,
  DOCUMENT_ID,
  addDocumentsSchema,
  datastoreRegistrationSchema,
  datastoreUploadFieldsSchema,
  documentListQuerySchema,
  documentUploadFieldsSchema,
} from '../schemas/datastore';
import { FORM_DATA, readForm, type UploadedFile } from '../schemas/form-data';

/** What a file sent as the whole body used to be typed (before uploads became multipart/form-data): told where it goes now. */
const RAW_FILE_TYPES = [
  'application/vnd.sqlite3',
  'application/x-sqlite3',
  'application/octet-stream',
  'text/plain',
  'text/markdown',
];

function datastoreId(raw: string): string {
  if (!DATASTORE_ID.test(raw))
    throw ValidationError.at(
      'path.id',
      `malformed datastore id ${JSON.stringify(raw.slice(0, 80))}: a datastore id is ds_ followed by 32 hex digits`,
      'invalid_format',
    );
  return raw;
}

function documentId(raw: string): string {
  if (!DOCUMENT_ID.test(raw))
    throw ValidationError.at(
      'path.doc',
      `malformed document id ${JSON.stringify(raw.slice(0, 80))}: 1-128 letters, digits, _ . : or -`,
      'invalid_format',
    );
  return raw;
}

/** Multipart routes: a SQLite upload, a document sent as a file. JSON requests pass on to datastoreRoutes. */
export function datastoreUploadRoutes(deps: GatewayDeps): Router {
  const { datastores } = deps;
  const r = Router();
  const form = express.raw({ type: FORM_DATA, limit: deps.config.DATASTORE_UPLOAD_MAX_BYTES });
  r.post('/datastores', form, async (req, res, next) => {
    if (!req.is(FORM_DATA))
      return next(
        rawFile(
          req,
          'a SQLite file is uploaded as multipart/form-data: the file as the part named file, and the fields name, description, allow_sql, query_timeout_ms, max_rows',
        ),
      );
    const { file, fields } = await readForm(req, datastoreUploadFieldsSchema);
    res.status(201).json(await datastores.registerUpload(requireAccount(req).account, fields, file.data));
  });
  r.post('/datastores/:id/documents', form, async (req, res, next) => {
    if (!req.is(FORM_DATA))
      return next(
        rawFile(
          req,
          'a document is sent as JSON, or as a file in multipart/form-data: the part named file, and the fields id, title, format',
        ),
      );
    const datastore = datastoreId(req.params.id);
    const { file, fields } = await readForm(req, documentUploadFieldsSchema);
    const content = documentText(file);
    const { id, title, format = formatOf(file) } = fields;
    const [doc] = await datastores.addDocuments(
      requireAccount(req).account,
      datastore,
      [{ id, title, content, format }],
      () => 'body.file',
    );
    res.status(201).json({ documents: [doc] });
  });
  return r;
}

/** A file sent as the whole body: a 415 saying how it is sent now; anything else goes on to the JSON routes. */
function rawFile(req: Request, how: string): UnsupportedMediaTypeError | undefined {
  return req.is(RAW_FILE_TYPES)
    ? new UnsupportedMediaTypeError(`${req.header('content-type')} is not taken here: ${how}`)
    : undefined;
}

/** A document's text: UTF-8 with something in it (the JSON form asks the same of `content`). */
function documentText(file: UploadedFile): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file.data);
  } catch {
    throw UnprocessableRequestError.at('body.file', 'a document is UTF-8 text', 'not_text');
  }
  if (!text) throw UnprocessableRequestError.at('body.file', 'the document is empty', 'empty');
  return text;
}

/** The format a file's type or name says, when the form does not. */
function formatOf(file: UploadedFile): 'text' | 'markdown' | 'json' {
  const name = file.name.toLowerCase();
  if (file.type.startsWith('text/markdown') || /\.(md|markdown)$/.test(name)) return 'markdown';
  if (file.type.startsWith('application/json') || name.endsWith('.json')) return 'json';
  return 'text';
}

export function datastoreRoutes({ datastores }: GatewayDeps): Router {
  const r = Router();
  r.post('/datastores', async (req, res) => {
    const body = parse(datastoreRegistrationSchema, req.body, 'body');
    res.status(201).json(await datastores.register(requireAccount(req).account, body));
  });
  r.get('/datastores', async (req, res) => {
    res.json({ datastores: await datastores.list(requireAccount(req).account) });
  });
  r.get('/datastores/:id', async (req, res) => {
    res.json(await datastores.get(requireAccount(req).account, datastoreId(req.params.id)));
  });
  r.delete('/datastores/:id', async (req, res) => {
    await datastores.remove(requireAccount(req).account, datastoreId(req.params.id));
    res.status(204).end();
  });
  r.post('/datastores/:id/documents', async (req, res) => {
    const body = parse(addDocumentsSchema, req.body, 'body');
    const [docs, pathOf] =
      'documents' in body ? [body.documents, (i: number) => fieldPath('body', 'documents', i)] : [[body], () => 'body'];
    res.status(201).json({
      documents: await datastores.addDocuments(requireAccount(req).account, datastoreId(req.params.id), docs, pathOf),
    });
  });
  r.get('/datastores/:id/documents', async (req, res) => {
    const q = parse(documentListQuerySchema, req.query, 'query');
    res.json(await datastores.listDocuments(requireAccount(req).account, datastoreId(req.params.id), q));
  });
  r.delete('/datastores/:id/documents/:doc', async (req, res) => {
    await datastores.removeDocument(
      requireAccount(req).account,
      datastoreId(req.params.id),
      documentId(req.params.doc),
    );
    res.status(204).end();
  });
  return r;
}
