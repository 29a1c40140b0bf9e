// Bearer-key authentication: every request but the probes names its account.
import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../../common/errors';
import type { Account, AccountDirectory } from '../../common/accounts/registry';

declare module 'express-serve-static-core' {
  interface Request {
    account?: Account;
  }
}

export function requireAccount(req: Request): Account {
  if (!req.account) throw new UnauthorizedError('missing API key');
  return req.account;
}

export function authenticate(directory: AccountDirectory) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      const header = req.header('authorization') ?? '';
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw new UnauthorizedError('missing or malformed Authorization header; expected "Bearer <API key>"');
      const account = await directory.lookup(m[1]);
      if (!account) throw new UnauthorizedError('unknown API key');
      req.account = account;
      next();
    } catch (err) {
      next(err);
    }
  };
}
