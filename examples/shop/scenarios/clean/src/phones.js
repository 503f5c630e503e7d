import { NotFoundError, ValidationError } from './errors.js';

const PHONE = /^\+?[0-9][0-9 ()-]{5,19}$/;

/** Stores a customer's phone number (digits, spaces, "()-" and a leading "+"), or clears it with null. */
export async function setCustomerPhone(db, customerId, phone) {
  const value = phone === null ? null : String(phone).trim();
  if (value !== null && !PHONE.test(value)) throw new ValidationError(`invalid phone number: ${JSON.stringify(phone)}`);
  const { rows } = await db.query('UPDATE customers SET phone = $2 WHERE id = $1 RETURNING id, phone', [customerId, value]);
  if (rows.length === 0) throw new NotFoundError('customer', customerId);
  return { id: rows[0].id, phone: rows[0].phone };
}

export async function customerPhone(db, customerId) {
  const { rows } = await db.query('SELECT phone FROM customers WHERE id = $1', [customerId]);
  if (rows.length === 0) throw new NotFoundError('customer', customerId);
  return rows[0].phone;
}
