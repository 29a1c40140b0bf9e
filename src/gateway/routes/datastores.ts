// The datastores API: register (a PostgreSQL URL, a SQLite file by path or
// upload, a documents knowledge base), list, describe, delete; add, list and
// remove the documents of a knowledge base. Files arrive as the raw body
// (uploadRoutes, mounted before the JSON body parser); everything else is JSON.
import express, { Router, type Request } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../auth';
import { parse } from '../validate';
import { ValidationError } from '../../errors';
import { fieldPath } from '../../field-path';
import type { DatastoreService } from '../datastore-service';
import {
  DATASTORE_ID,
  addDocumentsSchema,
  datastoreRegistrationSchema,
  datastoreUploadQuerySchema,
  documentListQuerySchema,
  documentUploadQuerySchema,
} from '../datastore-schemas';

/** Content types of an uploaded SQLite database. */
export const SQLITE_TYPES = ['application/vnd.sqlite3', 'application/x-sqlite3', 'application/octet-stream'];
/** Content types of a document sent as the body itself. */
export const DOCUMENT_TYPES = ['text/plain', 'text/markdown'];

function datastoreId(raw: string): string {
  if (!DATASTORE_ID.test(raw)) throw ValidationError.at('path.id', `malformed datastore id ${JSON.stringify(raw.slice(0, 80))}: a datastore id is ds_ followed by 32 hex digits`, 'invalid_format');
  return raw;
}

const isJson = (req: Request) => !!req.is('application/json');

/** Raw-body routes: a SQLite upload and a document sent as text. JSON requests pass on to datastoreRoutes. */
export function datastoreUploadRoutes(deps: GatewayDeps, datastores: DatastoreService): Router {
  const r = Router();
  const limit = deps.config.DATASTORE_UPLOAD_MAX_BYTES;
  r.post('/datastores', express.raw({ type: SQLITE_TYPES, limit }), async (req, res, next) => {
    if (isJson(req) || !Buffer.isBuffer(req.body)) return next();
    const q = parse(datastoreUploadQuerySchema, req.query, 'query');
    if (!req.body.length) throw ValidationError.at('body', 'the uploaded file is empty: send the SQLite file as the body', 'empty');
    res.status(201).json(await datastores.registerUpload(requireAccount(req).account, q, req.body));
  });
  r.post('/datastores/:id/documents', express.text({ type: DOCUMENT_TYPES, limit }), async (req, res, next) => {
    if (isJson(req) || typeof req.body !== 'string') return next();
    const q = parse(documentUploadQuerySchema, req.query, 'query');
    if (!req.body.trim()) throw ValidationError.at('body', 'the document is empty: send the text as the body', 'empty');
    const format = req.is('text/markdown') ? 'markdown' : 'text';
    const [doc] = await datastores.addDocuments(requireAccount(req).account, datastoreId(req.params.id), [{ ...q, content: req.body, format }], () => 'body');
    res.status(201).json({ documents: [doc] });
  });
  return r;
}

export function datastoreRoutes(_deps: GatewayDeps, datastores: DatastoreService): Router {
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
    const [docs, pathOf] = 'documents' in body ? [body.documents, (i: number) => fieldPath('body', 'documents', i)] : [[body], () => 'body'];
    res.status(201).json({ documents: await datastores.addDocuments(requireAccount(req).account, datastoreId(req.params.id), docs, pathOf) });
  });
  r.get('/datastores/:id/documents', async (req, res) => {
    const q = parse(documentListQuerySchema, req.query, 'query');
    res.json(await datastores.listDocuments(requireAccount(req).account, datastoreId(req.params.id), q));
  });
  r.delete('/datastores/:id/documents/:doc', async (req, res) => {
    await datastores.removeDocument(requireAccount(req).account, datastoreId(req.params.id), req.params.doc);
    res.status(204).end();
  });
  return r;
}
