import { NotFoundError, ValidationError } from './errors.js';

function toProduct(row) {
  return { id: row.id, sku: row.sku, name: row.name, priceCents: row.price_cents, stock: row.stock };
}

function nonNegativeInteger(value, what) {
  if (!Number.isInteger(value) || value < 0) throw new ValidationError(`${what} must be a non-negative integer, got ${value}`);
  return value;
}

export async function createProduct(db, { sku, name, priceCents, stock = 0 }) {
  if (!sku || !name) throw new ValidationError('a product needs a sku and a name');
  const { rows } = await db.query(
    'INSERT INTO products (sku, name, price_cents, stock) VALUES ($1, $2, $3, $4) RETURNING id, sku, name, price_cents, stock',
    [sku, name, nonNegativeInteger(priceCents, 'priceCents'), nonNegativeInteger(stock, 'stock')],
  );
  return toProduct(rows[0]);
}

export async function getProduct(db, id) {
  const { rows } = await db.query('SELECT id, sku, name, price_cents, stock FROM products WHERE id = $1', [id]);
  if (rows.length === 0) throw new NotFoundError('product', id);
  return toProduct(rows[0]);
}

export async function restock(db, id, quantity) {
  if (!Number.isInteger(quantity) || quantity <= 0) throw new ValidationError(`quantity must be a positive integer, got ${quantity}`);
  const { rows } = await db.query(
    'UPDATE products SET stock = stock + $2 WHERE id = $1 RETURNING id, sku, name, price_cents, stock',
    [id, quantity],
  );
  if (rows.length === 0) throw new NotFoundError('product', id);
  return toProduct(rows[0]);
}
