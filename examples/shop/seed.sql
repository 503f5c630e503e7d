-- Representative data for the shop: 300 customers, 120 products, 600 orders with 1-3 lines each.
-- Deterministic (no random()), so every baseline branch holds exactly the same rows. Plain SQL with
-- no psql meta-commands: it runs the same through psql and as one multi-statement query (which
-- PostgreSQL executes atomically).
--
-- Populated tables are the point: a migration that adds a NOT NULL column without a default to
-- customers passes on an empty database and fails here, as it would in production.

INSERT INTO customers (email, name, created_at)
SELECT format('customer%s@shop.example', g),
       format('Customer %s', g),
       timestamptz '2024-01-01 00:00:00+00' + g * interval '7 hours'
FROM generate_series(1, 300) AS g;

INSERT INTO products (sku, name, price_cents, stock, created_at)
SELECT format('SKU-%s', lpad(g::text, 5, '0')),
       format('%s %s', (ARRAY['Mug', 'T-shirt', 'Notebook', 'Poster', 'Sticker pack', 'Tote bag'])[1 + g % 6], g),
       199 + (g * 137) % 4800,
       -- every 20th product is sold out
       CASE WHEN g % 20 = 0 THEN 0 ELSE 5 + (g * 31) % 200 END,
       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 day'
FROM generate_series(1, 120) AS g;

INSERT INTO orders (customer_id, status, placed_at)
SELECT c.id,
       (ARRAY['pending', 'paid', 'paid', 'shipped', 'shipped', 'shipped', 'cancelled'])[1 + g % 7]::order_status,
       timestamptz '2024-03-01 00:00:00+00' + g * interval '5 hours 17 minutes'
FROM generate_series(1, 600) AS g
JOIN customers c ON c.email = format('customer%s@shop.example', 1 + (g * 7) % 300);

-- Lines 1..3 of each order pick distinct products (17 SKUs apart, out of 120).
INSERT INTO order_lines (order_id, line_no, product_id, quantity, unit_price_cents)
SELECT o.id, l, p.id, 1 + (o.id + l) % 4, p.price_cents
FROM orders o
CROSS JOIN LATERAL generate_series(1, 1 + o.id % 3) AS l
JOIN products p ON p.sku = format('SKU-%s', lpad((1 + (o.id * 13 + l * 17) % 120)::text, 5, '0'));

ANALYZE customers, products, orders, order_lines;
