-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE TABLE customers (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT customers_email_key UNIQUE (email),
  -- The application lower-cases addresses; the database refuses anything that is clearly not one.
  CONSTRAINT customers_email_check CHECK (email = lower(email) AND email ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
  CONSTRAINT customers_name_check CHECK (btrim(name) <> '')
);

-- Down Migration
DROP TABLE customers;
