import { withTransaction } from './db.js';
import { InsufficientStockError, InvalidStateError, NotFoundError, ValidationError } from './errors.js';

/** Merges repeated products and checks quantities; keeps the order the items were given in. */
function normalizeItems(items) {
  if (!Array.isArray(items) || items.length === 0) throw new ValidationError('an order needs at least one line');
  const wanted = new Map();
  for (const { productId, quantity } of items) {
    if (!Number.isInteger(productId)) throw new ValidationError(`productId must be an integer, got ${productId}`);
    if (!Number.isInteger(quantity) || quantity <= 0) throw new ValidationError(`quantity must be a positive integer, got ${quantity}`);
    wanted.set(productId, (wanted.get(productId) ?? 0) + quantity);
  }
  return wanted;
}

/**
 * Places an order atomically: the order, one line per product at today's price, and the stock
 * decrement. Nothing is written when a product is unknown or short of stock.
 * @param {import('pg').Pool | import('pg').ClientBase} db
 * @param {number} customerId
 * @param {{ productId: number, quantity: number }[]} items
 */
export async function placeOrder(db, customerId, items) {
  const wanted = normalizeItems(items);
  return withTransaction(db, async (tx) => {
    const customer = await tx.query('SELECT 1 FROM customers WHERE id = $1', [customerId]);
    if (customer.rowCount === 0) throw new NotFoundError('customer', customerId);

    // Lock the products in id order, so two orders for the same products queue instead of deadlocking.
    const { rows: products } = await tx.query(
      'SELECT id, price_cents, stock FROM products WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE',
      [[...wanted.keys()]],
    );
    const byId = new Map(products.map((p) => [p.id, p]));
    for (const [productId, quantity] of wanted) {
      const product = byId.get(productId);
      if (!product) throw new NotFoundError('product', productId);
      if (product.stock < quantity) throw new InsufficientStockError(productId, quantity, product.stock);
    }

    const { rows: [order] } = await tx.query(
      'INSERT INTO orders (customer_id) VALUES ($1) RETURNING id, customer_id, status, placed_at',
      [customerId],
    );
    const lines = [];
    for (const [productId, quantity] of wanted) {
      const unitPriceCents = byId.get(productId).price_cents;
      await tx.query('UPDATE products SET stock = stock - $2 WHERE id = $1', [productId, quantity]);
      await tx.query(
        'INSERT INTO order_lines (order_id, line_no, product_id, quantity, unit_price_cents) VALUES ($1, $2, $3, $4, $5)',
        [order.id, lines.length + 1, productId, quantity, unitPriceCents],
      );
      lines.push({ lineNo: lines.length + 1, productId, quantity, unitPriceCents });
    }
    return {
      id: order.id,
      customerId: order.customer_id,
      status: order.status,
      placedAt: order.placed_at,
      lines,
      totalCents: lines.reduce((sum, l) => sum + l.quantity * l.unitPriceCents, 0),
    };
  });
}

/** The order's total in cents, from the prices recorded on its lines. */
export async function orderTotal(db, orderId) {
  const { rows } = await db.query(
    `SELECT coalesce(sum(l.quantity::bigint * l.unit_price_cents), 0)::bigint AS total_cents
       FROM orders o LEFT JOIN order_lines l ON l.order_id = o.id
      WHERE o.id = $1
      GROUP BY o.id`,
    [orderId],
  );
  if (rows.length === 0) throw new NotFoundError('order', orderId);
  return rows[0].total_cents;
}

/** A customer's orders, newest first, with their totals (served by orders_customer_id_placed_at_idx). */
export async function customerOrders(db, customerId, { limit = 20 } = {}) {
  const { rows } = await db.query(
    `SELECT o.id, o.status, o.placed_at,
            count(l.line_no)::int AS line_count,
            coalesce(sum(l.quantity::bigint * l.unit_price_cents), 0)::bigint AS total_cents
       FROM orders o LEFT JOIN order_lines l ON l.order_id = o.id
      WHERE o.customer_id = $1
      GROUP BY o.id
      ORDER BY o.placed_at DESC, o.id DESC
      LIMIT $2`,
    [customerId, limit],
  );
  return rows.map((r) => ({ id: r.id, status: r.status, placedAt: r.placed_at, lineCount: r.line_count, totalCents: r.total_cents }));
}

async function transition(db, orderId, from, to, action, effect) {
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query('SELECT status FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
    if (rows.length === 0) throw new NotFoundError('order', orderId);
    if (!from.includes(rows[0].status)) throw new InvalidStateError(orderId, rows[0].status, action);
    if (effect) await effect(tx);
    await tx.query('UPDATE orders SET status = $2 WHERE id = $1', [orderId, to]);
    return { id: orderId, status: to };
  });
}

export function payOrder(db, orderId) {
  return transition(db, orderId, ['pending'], 'paid', 'paid');
}

export function shipOrder(db, orderId) {
  return transition(db, orderId, ['paid'], 'shipped', 'shipped');
}

/** Cancels an order that has not shipped yet and puts its items back in stock. */
export function cancelOrder(db, orderId) {
  return transition(db, orderId, ['pending', 'paid'], 'cancelled', 'cancelled', (tx) =>
    tx.query(
      `UPDATE products p SET stock = p.stock + l.quantity
         FROM (SELECT product_id, sum(quantity)::int AS quantity FROM order_lines WHERE order_id = $1 GROUP BY product_id) l
        WHERE p.id = l.product_id`,
      [orderId],
    ),
  );
}
