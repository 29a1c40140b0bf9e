// The API version of a request, decided in this one place (docs/api.md,
// "Versions"): its API-Version header, else the deployment's API_VERSION.
// Every answer says which version answered (the same header); a version this
// service does not have is a 400; a version marked deprecated in
// API_VERSION_DEPRECATIONS answers with Deprecation (RFC 9745) and, when it has
// one, Sunset (RFC 8594). Handlers read req.apiVersion where versions differ.
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../../common/config';
import {
  API_VERSION_HEADER,
  LATEST_VERSION,
  VERSION_NAMES,
  answerIn,
  isApiVersion,
  type ApiVersionName,
} from '../../common/api-versions';
import { ValidationError } from '../../common/errors';

declare module 'express-serve-static-core' {
  interface Request {
    /** The version this request is answered in (set by apiVersion(), before the routes). */
    apiVersion?: ApiVersionName;
  }
}

export function apiVersion(config: Pick<Config, 'API_VERSION' | 'API_VERSION_DEPRECATIONS'>) {
  const pinned = config.API_VERSION as ApiVersionName;
  return (req: Request, res: Response, next: NextFunction) => {
    const asked = req.header(API_VERSION_HEADER);
    const known = asked === undefined || isApiVersion(asked);
    // A request in a version this service lacks is refused in the deployment's own.
    const version = asked !== undefined && isApiVersion(asked) ? asked : pinned;
    req.apiVersion = version;
    res.setHeader(API_VERSION_HEADER, version);
    // An earlier version's JSON answers, shaped as it was released (api-versions.ts, answerIn).
    if (version !== LATEST_VERSION) {
      const json = res.json.bind(res);
      res.json = (body: unknown) => json(answerIn(version, body));
    }
    const deprecation = config.API_VERSION_DEPRECATIONS[version];
    if (deprecation) {
      res.setHeader('Deprecation', `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`);
      if (deprecation.sunsetAt) res.setHeader('Sunset', deprecation.sunsetAt.toUTCString());
    }
    if (known) return next();
    const shown = JSON.stringify(asked.slice(0, 40));
    next(
      ValidationError.at(
        `header.${API_VERSION_HEADER}`,
        `no API version ${shown} here: this service has ${VERSION_NAMES.join(', ')} (a date, YYYY-MM-DD)`,
        'unknown_version',
      ),
    );
  };
}
