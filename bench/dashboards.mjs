#!/usr/bin/env node
/**
 * npm run bench:dashboard — both dashboards at size, one after the other: the local one that
 * `consort dashboard` serves (bench/dashboard.mjs: 1,000 turns, 10,000 events) and the App's
 * /dashboard (bench/dashboard-app.mjs, against the PostgreSQL at CONSORT_BENCH_PG_URL). Neither
 * takes options; the figures and targets are printed by each. Run one alone with
 * `node bench/dashboard.mjs` or `node bench/dashboard-app.mjs` after `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './lib/args.js';

benchArgs(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
for (const script of ['dashboard.mjs', 'dashboard-app.mjs'])
  execFileSync(process.execPath, [path.join(here, script)], { stdio: 'inherit' });
