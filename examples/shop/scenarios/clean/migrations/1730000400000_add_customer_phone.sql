-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

-- A nullable column with no default: a catalog-only change, no table rewrite, safe on a busy table.
ALTER TABLE customers ADD COLUMN phone text;

-- Down Migration
ALTER TABLE customers DROP COLUMN phone;
