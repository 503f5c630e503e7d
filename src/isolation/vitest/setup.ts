/**
 * vitest `setupFiles: ['consort-db/vitest/setup']`: every test file gets its own database before any
 * of its modules load (`process.env.DATABASE_URL`, or the configured variable), returned after it.
 * The same as the `database` fixture of `consort-db/vitest`, for code that reads the variable at import.
 */
import { afterAll } from 'vitest';
import { leaseTestDatabase } from './index.js';

const { done } = await leaseTestDatabase();
afterAll(done);
