/**
 * Runs the jest this project resolves, found as Node finds any import: in its own node_modules
 * after `npm install`, else in the nearest one above it (inside the Consort repository, the
 * repository's). Start it under `node --experimental-vm-modules`, which jest needs for ESM tests;
 * its arguments are jest's.
 */
import { createRequire } from 'node:module';

createRequire(import.meta.url)('jest/bin/jest');
