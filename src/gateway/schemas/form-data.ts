// A multipart/form-data body (RFC 7578), the way files come to the API: one
// part named `file` (the file, with or without a filename) and text fields
// beside it. Parsed by Node's own FormData reader (undici), from the raw body
// express.raw collected under its size limit.
import type { Request } from 'express';
import type { z } from 'zod';
import { RequestIssue, ValidationError } from '../../common/errors';
import { fieldPath } from '../../common/field-path';
import { validationError } from '../../common/errors';

export const FORM_DATA = 'multipart/form-data';

export interface UploadedFile {
  data: Buffer;
  /** The part's Content-Type ('' when it had none). */
  type: string;
  /** The part's filename ('' when it had none). */
  name: string;
}

export interface Form<T> {
  file: UploadedFile;
  /** The other parts, read as text by `fields`. */
  fields: T;
}

/** The form of `req` (its raw body read by express.raw), its text parts read by `schema`: one 400 naming every problem. */
export async function readForm<T extends z.ZodType>(req: Request, schema: T): Promise<Form<z.infer<T>>> {
  const { file, fields } = await formParts(req);
  const read = schema.safeParse(fields);
  const issues: RequestIssue[] = [
    ...(file
      ? []
      : [{ path: 'body.file', message: 'required: the file, as the part named file', code: 'invalid_type' }]),
    ...(read.success ? [] : (validationError(read.error, 'body').details as RequestIssue[])),
  ];
  if (issues.length || !file || !read.success) throw ValidationError.of(issues);
  return { file, fields: read.data };
}

async function formParts(req: Request): Promise<{ file?: UploadedFile; fields: Record<string, string> }> {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  let parsed: FormData;
  try {
    parsed = await new Response(raw, {
      headers: { 'content-type': req.header('content-type') ?? FORM_DATA },
    }).formData();
  } catch {
    throw ValidationError.at(
      'body',
      'not a well-formed multipart/form-data body (RFC 7578: parts between its boundary lines)',
      'malformed_form',
    );
  }
  let file: UploadedFile | undefined;
  const fields: Record<string, string> = Object.create(null); // a part may be named __proto__ or constructor
  for (const [name, value] of parsed) {
    if (name in fields || (name === 'file' && file))
      throw ValidationError.at(fieldPath('body', name), 'given more than once', 'duplicate');
    const part =
      typeof value === 'string'
        ? { data: Buffer.from(value), type: '', name: '' }
        : { data: Buffer.from(await value.arrayBuffer()), type: value.type, name: value.name };
    if (name === 'file') file = part;
    else fields[name] = part.data.toString('utf8');
  }
  return { file, fields };
}
