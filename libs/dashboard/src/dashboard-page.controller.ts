import { Controller, Get, Inject, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { type Request, type Response } from 'express';
import { type Asset, DASHBOARD_ASSETS } from './dashboard-assets.js';

/**
 * The page's only sources are its own files: no inline script or style, nothing from elsewhere, and
 * data only from this origin (the feed and the admin API). Framing is refused.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The dashboard's static page at /dashboard/ (under the application's global prefix, if any; /dashboard
 * redirects there). The page holds no data: it asks the feed and the admin
 * API, with the admin credential the operator types in, so the page itself is served to anyone who
 * can reach the broker (and shows them the 401 form).
 */
@ApiExcludeController()
@Controller('dashboard')
export class DashboardPageController {
  constructor(@Inject(DASHBOARD_ASSETS) private readonly assets: ReadonlyMap<string, Asset>) {}

  @Get()
  page(@Req() req: Request, @Res() res: Response): void {
    // The page names its files and the admin API relative to <prefix>/dashboard/, so it must be there.
    const path = req.originalUrl.split('?')[0] ?? '';
    if (!path.endsWith('/')) return res.redirect(301, `${path.slice(path.lastIndexOf('/') + 1)}/`);
    this.send(req, res, 'index.html', 'no-cache');
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Req() req: Request, @Res() res: Response): void {
    // Vite names them by content hash: a new build has new names.
    this.send(req, res, `assets/${file}`, 'public, max-age=31536000, immutable');
  }

  private send(req: Request, res: Response, name: string, cacheControl: string): void {
    const asset = this.assets.get(name);
    if (asset === undefined) throw new NotFoundException(`No dashboard file ${name}.`);
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzipped : asset.body;
    res.writeHead(200, {
      'Content-Type': asset.type,
      'Content-Length': body.byteLength,
      ...(gzip && { 'Content-Encoding': 'gzip' }),
      Vary: 'Accept-Encoding',
      'Cache-Control': cacheControl,
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    res.end(body);
  }
}
