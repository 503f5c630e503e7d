-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

ALTER TABLE products ADD COLUMN discontinued_at timestamptz;

-- Down Migration
ALTER TABLE products DROP COLUMN discontinued_at;
