/**
 * Two shoppers race for the last item. This needs committed data and separate connections, so it
 * cannot run inside a rolled-back transaction: it creates its own rows and deletes them afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createPool } from '../src/db.js';
import { InsufficientStockError } from '../src/errors.js';
import { placeOrder } from '../src/orders.js';
import { getProduct } from '../src/products.js';
import { databaseUrl, makeCustomer, makeProduct } from './helpers.js';

describe('concurrent orders', () => {
  let pool;
  const created = { customers: [], products: [] };

  beforeAll(() => {
    pool = createPool(databaseUrl());
  });

  afterAll(async () => {
    if (!pool) return;
    await pool.query('DELETE FROM orders WHERE customer_id = ANY($1::bigint[])', [created.customers]);
    await pool.query('DELETE FROM customers WHERE id = ANY($1::bigint[])', [created.customers]);
    await pool.query('DELETE FROM products WHERE id = ANY($1::bigint[])', [created.products]);
    await pool.end();
  });

  test('only one of two simultaneous orders gets the last item', async () => {
    const customers = [await makeCustomer(pool), await makeCustomer(pool)];
    const product = await makeProduct(pool, { stock: 1 });
    created.customers.push(...customers.map((c) => c.id));
    created.products.push(product.id);

    const results = await Promise.allSettled(customers.map((c) => placeOrder(pool, c.id, [{ productId: product.id, quantity: 1 }])));

    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(results.find((r) => r.status === 'rejected').reason).toBeInstanceOf(InsufficientStockError);
    expect((await getProduct(pool, product.id)).stock).toBe(0);
  });
});
