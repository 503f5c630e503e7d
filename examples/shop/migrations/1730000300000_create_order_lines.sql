-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';

CREATE TABLE order_lines (
  order_id bigint NOT NULL,
  line_no bigint NOT NULL,
  product_id bigint NOT NULL,
  quantity bigint NOT NULL,
  -- The price at the time of the order: later price changes must not rewrite old orders.
  unit_price_cents bigint NOT NULL,
  CONSTRAINT order_lines_pkey PRIMARY KEY (order_id, line_no),
  CONSTRAINT order_lines_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE,
  CONSTRAINT order_lines_product_id_fkey FOREIGN KEY (product_id) REFERENCES products (id) ON DELETE RESTRICT,
  CONSTRAINT order_lines_line_no_check CHECK (line_no > 0),
  CONSTRAINT order_lines_quantity_check CHECK (quantity > 0),
  CONSTRAINT order_lines_unit_price_cents_check CHECK (unit_price_cents >= 0),
  CONSTRAINT order_lines_order_product_key UNIQUE (order_id, product_id)
);

-- Foreign keys are not indexed automatically; this one keeps product deletes and "who bought X" fast.
CREATE INDEX order_lines_product_id_idx ON order_lines (product_id);

-- Down Migration
DROP TABLE order_lines;
