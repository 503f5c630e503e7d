import { describe, expect, test } from '@jest/globals';
import { InsufficientStockError, InvalidStateError, NotFoundError, ValidationError } from '../src/errors.js';
import { cancelOrder, customerOrders, orderTotal, payOrder, placeOrder, shipOrder } from '../src/orders.js';
import { getProduct } from '../src/products.js';
import { makeCustomer, makeProduct, rollbackEachTest } from './helpers.js';

describe('orders', () => {
  const db = rollbackEachTest();

  test('placeOrder writes the order and its lines and decrements stock', async () => {
    const customer = await makeCustomer(db());
    const mug = await makeProduct(db(), { priceCents: 1250, stock: 5 });
    const poster = await makeProduct(db(), { priceCents: 800, stock: 3 });

    const order = await placeOrder(db(), customer.id, [
      { productId: mug.id, quantity: 2 },
      { productId: poster.id, quantity: 1 },
    ]);

    expect(order).toMatchObject({ customerId: customer.id, status: 'pending', totalCents: 3300 });
    expect(order.lines).toEqual([
      { lineNo: 1, productId: mug.id, quantity: 2, unitPriceCents: 1250 },
      { lineNo: 2, productId: poster.id, quantity: 1, unitPriceCents: 800 },
    ]);
    expect((await getProduct(db(), mug.id)).stock).toBe(3);
    expect((await getProduct(db(), poster.id)).stock).toBe(2);
    const { rows } = await db().query('SELECT line_no, product_id, quantity FROM order_lines WHERE order_id = $1 ORDER BY line_no', [order.id]);
    expect(rows).toEqual([
      { line_no: 1, product_id: mug.id, quantity: 2 },
      { line_no: 2, product_id: poster.id, quantity: 1 },
    ]);
  });

  test('repeated products are merged into one line', async () => {
    const customer = await makeCustomer(db());
    const mug = await makeProduct(db(), { priceCents: 500, stock: 10 });
    const order = await placeOrder(db(), customer.id, [
      { productId: mug.id, quantity: 1 },
      { productId: mug.id, quantity: 2 },
    ]);
    expect(order.lines).toEqual([{ lineNo: 1, productId: mug.id, quantity: 3, unitPriceCents: 500 }]);
    expect((await getProduct(db(), mug.id)).stock).toBe(7);
  });

  test('fails on insufficient stock and writes nothing', async () => {
    const customer = await makeCustomer(db());
    const plenty = await makeProduct(db(), { stock: 10 });
    const scarce = await makeProduct(db(), { stock: 1 });

    const attempt = placeOrder(db(), customer.id, [
      { productId: plenty.id, quantity: 1 },
      { productId: scarce.id, quantity: 2 },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(InsufficientStockError);
    await expect(attempt).rejects.toMatchObject({ productId: scarce.id, requested: 2, available: 1 });

    expect((await getProduct(db(), plenty.id)).stock).toBe(10);
    expect((await getProduct(db(), scarce.id)).stock).toBe(1);
    expect(await customerOrders(db(), customer.id)).toEqual([]);
  });

  test('rejects unknown customers and products, and empty or invalid lines', async () => {
    const customer = await makeCustomer(db());
    const product = await makeProduct(db());
    await expect(placeOrder(db(), -1, [{ productId: product.id, quantity: 1 }])).rejects.toBeInstanceOf(NotFoundError);
    await expect(placeOrder(db(), customer.id, [{ productId: -1, quantity: 1 }])).rejects.toBeInstanceOf(NotFoundError);
    await expect(placeOrder(db(), customer.id, [])).rejects.toBeInstanceOf(ValidationError);
    await expect(placeOrder(db(), customer.id, [{ productId: product.id, quantity: 0 }])).rejects.toBeInstanceOf(ValidationError);
  });

  test('orderTotal uses the prices recorded on the order, not today’s prices', async () => {
    const customer = await makeCustomer(db());
    const a = await makeProduct(db(), { priceCents: 199 });
    const b = await makeProduct(db(), { priceCents: 2500 });
    const order = await placeOrder(db(), customer.id, [
      { productId: a.id, quantity: 3 },
      { productId: b.id, quantity: 2 },
    ]);
    await db().query('UPDATE products SET price_cents = price_cents * 2 WHERE id = ANY($1::bigint[])', [[a.id, b.id]]);
    expect(await orderTotal(db(), order.id)).toBe(3 * 199 + 2 * 2500);
    await expect(orderTotal(db(), -1)).rejects.toBeInstanceOf(NotFoundError);
  });

  test('customerOrders lists a customer’s orders newest first with totals', async () => {
    const alice = await makeCustomer(db());
    const bob = await makeCustomer(db());
    const product = await makeProduct(db(), { priceCents: 1000, stock: 20 });
    const first = await placeOrder(db(), alice.id, [{ productId: product.id, quantity: 1 }]);
    const second = await placeOrder(db(), alice.id, [{ productId: product.id, quantity: 4 }]);
    await placeOrder(db(), bob.id, [{ productId: product.id, quantity: 2 }]);

    const orders = await customerOrders(db(), alice.id);
    expect(orders.map((o) => [o.id, o.lineCount, o.totalCents])).toEqual([
      [second.id, 1, 4000],
      [first.id, 1, 1000],
    ]);
    expect(await customerOrders(db(), alice.id, { limit: 1 })).toHaveLength(1);
  });

  test('an order moves pending → paid → shipped, and cannot be cancelled once shipped', async () => {
    const customer = await makeCustomer(db());
    const product = await makeProduct(db(), { stock: 2 });
    const order = await placeOrder(db(), customer.id, [{ productId: product.id, quantity: 1 }]);
    await expect(shipOrder(db(), order.id)).rejects.toBeInstanceOf(InvalidStateError);
    expect(await payOrder(db(), order.id)).toEqual({ id: order.id, status: 'paid' });
    expect(await shipOrder(db(), order.id)).toEqual({ id: order.id, status: 'shipped' });
    await expect(cancelOrder(db(), order.id)).rejects.toBeInstanceOf(InvalidStateError);
    expect((await getProduct(db(), product.id)).stock).toBe(1);
  });

  test('cancelling an unshipped order puts its items back in stock', async () => {
    const customer = await makeCustomer(db());
    const product = await makeProduct(db(), { stock: 5 });
    const order = await placeOrder(db(), customer.id, [{ productId: product.id, quantity: 5 }]);
    expect((await getProduct(db(), product.id)).stock).toBe(0);
    await cancelOrder(db(), order.id);
    expect((await getProduct(db(), product.id)).stock).toBe(5);
    expect((await customerOrders(db(), customer.id))[0]).toMatchObject({ id: order.id, status: 'cancelled' });
  });

  test('the database refuses negative stock even if the application is bypassed', async () => {
    const product = await makeProduct(db(), { stock: 1 });
    await expect(db().query('UPDATE products SET stock = stock - 2 WHERE id = $1', [product.id])).rejects.toMatchObject({
      code: '23514',
      constraint: 'products_stock_check',
    });
  });
});
