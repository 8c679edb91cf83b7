import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { Router } from 'express';
import { html, page } from './html';
import { navFor } from './keys-page';
import { createProposalPdfRouter } from './proposal-pdf.router';
import { createGuards } from './web-guards';
import type { WebDependencies } from './web-dependencies';
import { WORKSPACE_PAGES } from './workspace-pages';

/** The workspace's bundle (scripts/build-web.js): hashed file names, listed in dist/web/manifest.json. */
interface Bundle {
  script: string;
  style: string;
}

function bundleDir(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'dist', 'web');
}

/**
 * The manifest is read again while a new build may replace it (development, tests) and once for
 * good in production, where the bundle is built before the service starts.
 */
function bundleReader(dir: string, production: boolean): () => Bundle {
  let cached: Bundle | undefined;
  return () => {
    if (cached) return cached;
    const manifest = path.join(dir, 'manifest.json');
    if (!existsSync(manifest)) throw new Error(`${manifest} is missing: run node scripts/build.js (npm start does) to bundle the web workspace`);
    const bundle = JSON.parse(readFileSync(manifest, 'utf8')) as Bundle;
    if (production) cached = bundle;
    return bundle;
  };
}

/**
 * The workspace's pages (workspace-pages.ts): server-rendered shells (title, navigation, CSRF token)
 * whose content is drawn by the Preact bundle, a GraphQL client of /graphql like the dashboard.
 */
export function createWorkspaceRouter(deps: WebDependencies): Router {
  const router = Router();
  const guards = createGuards(deps.orm);
  const dir = bundleDir();
  const bundle = bundleReader(dir, deps.config.isProduction);
  // The names change with the content, so browsers may keep each file for good.
  router.use('/assets/web', express.static(dir, { immutable: true, maxAge: '365d', index: false }));
  // The Deal page's proposal links: the PDF for the session, as the API sends it for a key.
  router.use(createProposalPdfRouter(deps));

  for (const shell of WORKSPACE_PAGES) {
    router.get(shell.path, async (req, res) => {
      const who = await guards.withSession(req, res);
      if (!who) return;
      const { script, style } = bundle();
      res.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'");
      res.set('Cache-Control', 'no-store');
      const id = typeof req.params.id === 'string' ? req.params.id : '';
      const data = Object.entries(shell.data?.(deps.events) ?? {}).map(([name, value]) => html` data-${name}="${value}"`);
      res.send(
        page({
          title: shell.title,
          nav: navFor(who, req.path),
          scripts: [`/assets/web/${script}`],
          body: html`<link rel="stylesheet" href="/assets/web/${style}">
${shell.intro ? html`<p class="muted">${who.session.livemode ? 'Live' : 'Test'} data. ${shell.intro}</p>` : ''}
<div id="workspace" data-page="${shell.page}" data-id="${id}" data-livemode="${String(who.session.livemode)}" data-role="${who.member.role}" data-member-id="${who.user.id}" data-account-name="${who.account.name}"${data}><p class="muted" role="status">Loading…</p></div>`,
        }),
      );
    });
  }
  return router;
}
