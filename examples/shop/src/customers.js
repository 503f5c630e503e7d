import { withTransaction } from './db.js';
import { DuplicateEmailError, NotFoundError, ValidationError } from './errors.js';

const EMAIL = /^[^@\s]+@[^@\s]+$/;

function toCustomer(row) {
  return { id: row.id, email: row.email, name: row.name, createdAt: row.created_at };
}

export async function createCustomer(db, { email, name }) {
  const address = String(email ?? '').trim().toLowerCase();
  const fullName = String(name ?? '').trim();
  if (!EMAIL.test(address)) throw new ValidationError(`invalid email address: ${JSON.stringify(email)}`);
  if (fullName === '') throw new ValidationError('a customer needs a name');
  try {
    // In a transaction of its own (or a savepoint): a duplicate must not abort the caller's work.
    return await withTransaction(db, async (tx) => {
      const { rows } = await tx.query(
        'INSERT INTO customers (email, name) VALUES ($1, $2) RETURNING id, email, name, created_at',
        [address, fullName],
      );
      return toCustomer(rows[0]);
    });
  } catch (error) {
    if (error.code === '23505' && error.constraint === 'customers_email_key') throw new DuplicateEmailError(address);
    throw error;
  }
}

export async function getCustomer(db, id) {
  const { rows } = await db.query('SELECT id, email, name, created_at FROM customers WHERE id = $1', [id]);
  if (rows.length === 0) throw new NotFoundError('customer', id);
  return toCustomer(rows[0]);
}

export async function findCustomerByEmail(db, email) {
  const { rows } = await db.query('SELECT id, email, name, created_at FROM customers WHERE email = $1', [
    String(email ?? '').trim().toLowerCase(),
  ]);
  return rows.length === 0 ? null : toCustomer(rows[0]);
}
