export { createPool, withTransaction } from './db.js';
export { createCustomer, findCustomerByEmail, getCustomer } from './customers.js';
export { createProduct, getProduct, restock } from './products.js';
export { cancelOrder, customerOrders, orderTotal, payOrder, placeOrder, shipOrder } from './orders.js';
export * from './errors.js';
