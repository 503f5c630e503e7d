/**
 * Warm pools on the embedded PostgreSQL 18 (the run's shared server, a namespace of this file's):
 * the contract in pool-contract.ts; pool-postgres.test.ts runs it on the PostgreSQL at 127.0.0.1:5432.
 */
import { localTestProvider } from '../helpers/servers.js';
import { warmPoolContract } from './pool-contract.js';

warmPoolContract('local', localTestProvider);
