-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE TABLE products (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sku text NOT NULL,
  name text NOT NULL,
  price_cents bigint NOT NULL,
  stock bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT products_sku_key UNIQUE (sku),
  CONSTRAINT products_price_cents_check CHECK (price_cents >= 0),
  CONSTRAINT products_stock_check CHECK (stock >= 0)
);

-- Down Migration
DROP TABLE products;
