-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE TYPE order_status AS ENUM ('pending', 'paid', 'shipped', 'cancelled');

CREATE TABLE orders (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id bigint NOT NULL,
  status order_status NOT NULL DEFAULT 'pending',
  placed_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE RESTRICT
);

-- "My orders, newest first" is the hot query (customerOrders in src/orders.js).
CREATE INDEX orders_customer_id_placed_at_idx ON orders (customer_id, placed_at DESC);

-- Down Migration
DROP TABLE orders;
DROP TYPE order_status;
