/**
 * bench:isolation's "fresh database per file": what a project does for isolation without branches —
 * a jest environment that creates an empty database for each test file, runs every migration with
 * node-pg-migrate and loads the seed, and drops the database when the file ends.
 * BENCH_ADMIN_URL: an admin connection; BENCH_PROJECT: the shop (migrations/, seed.sql).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import { runner } from 'node-pg-migrate';

const require = createRequire(import.meta.url);
const { TestEnvironment } = require('jest-environment-node');

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function sql(url, text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export default class FreshDatabaseEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    const admin = process.env.BENCH_ADMIN_URL;
    const project = process.env.BENCH_PROJECT;
    this.database = `fresh_${randomBytes(5).toString('hex')}`;
    await sql(admin, `CREATE DATABASE ${this.database}`);
    const url = withDatabase(admin, this.database);
    await runner({ databaseUrl: url, dir: path.join(project, 'migrations'), direction: 'up', migrationsTable: 'pgmigrations', log: () => undefined });
    await sql(url, await readFile(path.join(project, 'seed.sql'), 'utf8'));
    this.global.process.env.DATABASE_URL = url;
  }

  async teardown() {
    try {
      if (this.database) await sql(process.env.BENCH_ADMIN_URL, `DROP DATABASE IF EXISTS ${this.database} WITH (FORCE)`);
    } finally {
      await super.teardown();
    }
  }
}
