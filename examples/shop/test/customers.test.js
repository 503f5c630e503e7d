import { describe, expect, test } from '@jest/globals';
import { createCustomer, findCustomerByEmail, getCustomer } from '../src/customers.js';
import { DuplicateEmailError, NotFoundError, ValidationError } from '../src/errors.js';
import { rollbackEachTest } from './helpers.js';

describe('customers', () => {
  const db = rollbackEachTest();

  test('creates a customer with a normalized email', async () => {
    const created = await createCustomer(db(), { email: '  Ada.Lovelace@Test.Example ', name: ' Ada Lovelace ' });
    expect(created).toMatchObject({ email: 'ada.lovelace@test.example', name: 'Ada Lovelace' });
    expect(Number.isInteger(created.id)).toBe(true);
    expect(await getCustomer(db(), created.id)).toEqual(created);
    expect(await findCustomerByEmail(db(), 'ADA.LOVELACE@test.example')).toEqual(created);
  });

  test('rejects a second customer with the same email, case-insensitively', async () => {
    await createCustomer(db(), { email: 'grace@test.example', name: 'Grace Hopper' });
    await expect(createCustomer(db(), { email: 'Grace@Test.Example', name: 'Someone else' })).rejects.toBeInstanceOf(DuplicateEmailError);
    // The failed insert was confined to a savepoint: the test's transaction is still usable.
    expect(await findCustomerByEmail(db(), 'grace@test.example')).toMatchObject({ name: 'Grace Hopper' });
  });

  test('validates input before touching the database', async () => {
    await expect(createCustomer(db(), { email: 'not-an-email', name: 'X' })).rejects.toBeInstanceOf(ValidationError);
    await expect(createCustomer(db(), { email: 'x@test.example', name: '   ' })).rejects.toBeInstanceOf(ValidationError);
  });

  test('the database itself refuses malformed emails and blank names', async () => {
    await db().query('SAVEPOINT direct');
    await expect(db().query("INSERT INTO customers (email, name) VALUES ('Upper@Test.Example', 'X')")).rejects.toMatchObject({
      code: '23514',
      constraint: 'customers_email_check',
    });
    await db().query('ROLLBACK TO SAVEPOINT direct');
    await expect(db().query("INSERT INTO customers (email, name) VALUES ('blank@test.example', ' ')")).rejects.toMatchObject({
      code: '23514',
      constraint: 'customers_name_check',
    });
  });

  test('reports an unknown customer', async () => {
    await expect(getCustomer(db(), -1)).rejects.toBeInstanceOf(NotFoundError);
    expect(await findCustomerByEmail(db(), 'nobody@test.example')).toBeNull();
  });
});
