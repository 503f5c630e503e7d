/**
 * Warm pools on the PostgreSQL at 127.0.0.1:5432 (CONSORT_TEST_POSTGRES_URL), the server a user
 * runs: the contract in pool-contract.ts; pool-local.test.ts runs it on the embedded PostgreSQL 18.
 */
import { postgresTestProvider } from '../helpers/servers.js';
import { warmPoolContract } from './pool-contract.js';

warmPoolContract('postgres', postgresTestProvider);
