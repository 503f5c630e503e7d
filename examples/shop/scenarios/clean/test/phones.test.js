import { describe, expect, test } from '@jest/globals';
import { NotFoundError, ValidationError } from '../src/errors.js';
import { customerPhone, setCustomerPhone } from '../src/phones.js';
import { makeCustomer, rollbackEachTest } from './helpers.js';

describe('customer phone numbers', () => {
  const db = rollbackEachTest();

  test('existing customers have no phone until one is set', async () => {
    const customer = await makeCustomer(db());
    expect(await customerPhone(db(), customer.id)).toBeNull();
    expect(await setCustomerPhone(db(), customer.id, ' +44 20 7946 0958 ')).toEqual({ id: customer.id, phone: '+44 20 7946 0958' });
    expect(await customerPhone(db(), customer.id)).toBe('+44 20 7946 0958');
    await setCustomerPhone(db(), customer.id, null);
    expect(await customerPhone(db(), customer.id)).toBeNull();
  });

  test('rejects malformed numbers and unknown customers', async () => {
    const customer = await makeCustomer(db());
    await expect(setCustomerPhone(db(), customer.id, 'call me')).rejects.toBeInstanceOf(ValidationError);
    await expect(setCustomerPhone(db(), -1, '+1 555 0100')).rejects.toBeInstanceOf(NotFoundError);
  });

  test('seeded customers are untouched by the migration', async () => {
    const { rows } = await db().query('SELECT count(*)::int AS n FROM customers WHERE phone IS NOT NULL');
    expect(rows[0].n).toBe(0);
  });
});
