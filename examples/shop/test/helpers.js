/**
 * Test helpers: the suite runs against the database in DATABASE_URL (Consort points it at a fresh
 * branch). Each test runs inside a transaction that is rolled back, so tests neither see nor leave
 * each other's rows, and they never depend on the seed data.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import pg from 'pg';
import { createCustomer } from '../src/customers.js';
import { createProduct } from '../src/products.js';

export function databaseUrl() {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: the shop suite needs a database with the migrations applied');
  return url;
}

export async function connect() {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  return client;
}

/** One connection per test file; every test in its own transaction, rolled back afterwards. */
export function rollbackEachTest() {
  let client;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.end();
  });
  beforeEach(async () => {
    await client.query('BEGIN');
  });
  afterEach(async () => {
    await client.query('ROLLBACK');
  });
  return () => client;
}

let seq = 0;
const unique = () => `${process.pid}-${Date.now().toString(36)}-${++seq}`;

export function makeCustomer(db, overrides = {}) {
  const tag = unique();
  return createCustomer(db, { email: `test-${tag}@test.example`, name: `Test customer ${tag}`, ...overrides });
}

export function makeProduct(db, overrides = {}) {
  const tag = unique();
  return createProduct(db, { sku: `TEST-${tag}`, name: `Test product ${tag}`, priceCents: 1000, stock: 10, ...overrides });
}
