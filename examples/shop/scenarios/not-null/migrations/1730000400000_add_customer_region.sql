-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

ALTER TABLE customers ADD COLUMN region text NOT NULL;

-- Down Migration
ALTER TABLE customers DROP COLUMN region;
