// GET /console: the web console (console/, built into console/dist by `npm start`'s set-up and the
// image). No key is needed to load the page: it signs in with an API key and calls the API like
// any client. The page is never cached (a new build is seen at once); its assets, named by their
// content's hash, are cached for good. A strict Content-Security-Policy: scripts, styles and
// connections of this origin only, no inline script or style, no framing.
import fs from 'node:fs';
import path from 'node:path';
import express, { Request, Response, Router } from 'express';
import type { Config } from '../../common/config';
import { NotFoundError } from '../../common/errors';
import { CONSOLE_DIST } from '../../../console/build';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The built page, with where the Temporal Web UI shows a task's workflow when TEMPORAL_UI_URL is set. */
function page(config: Config, dir: string): string | undefined {
  let html: string;
  try {
    html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
  } catch {
    return undefined;
  }
  if (!config.TEMPORAL_UI_URL) return html;
  const base = `${config.TEMPORAL_UI_URL.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows/`;
  return html.replace('<head>', `<head>\n<meta name="temporal-ui" content="${escapeAttr(base)}">`);
}

/** `consoleDir`: where the built console is (default console/dist; a test's own). */
export function consoleRoutes(deps: { config: Config; consoleDir?: string }): Router {
  const router = Router();
  const dir = deps.consoleDir ?? CONSOLE_DIST;
  if (deps.config.CONSOLE === 'off') {
    router.use('/console', () => {
      throw new NotFoundError('the web console is turned off here (CONSOLE=off)');
    });
    return router;
  }
  // Also /console/ (routing is not strict).
  router.get('/console', (_req: Request, res: Response) => {
    // Read per request (a small file): a build swapped in while the gateway runs is served at once.
    const html = page(deps.config, dir);
    if (html === undefined) {
      throw new NotFoundError('the web console is not built here: node -r ./bin/register-ts.js console/build.ts');
    }
    secure(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(html);
  });
  router.use(
    '/console/assets',
    (_req, res, next) => {
      secure(res);
      next();
    },
    express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: true }),
    () => {
      throw new NotFoundError('no such file of the web console');
    },
  );
  return router;
}
