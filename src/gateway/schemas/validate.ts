// zod parsing of request parts into typed values or a 400 naming what is wrong.
import { z } from 'zod';
import { validationError } from '../../common/errors';

export function parse<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query'): z.infer<T> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw validationError(r.error, where);
  return r.data;
}
