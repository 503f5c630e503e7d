-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

ALTER TABLE customers ADD COLUMN IF NOT EXISTS loyalty_points bigint;
ALTER TABLE customers ADD COLUMN IF NOT EXISTS loyalty_tier text;

-- Down Migration
-- Bug on purpose: drops loyalty_points but forgets loyalty_tier.
ALTER TABLE customers DROP COLUMN IF EXISTS loyalty_points;
