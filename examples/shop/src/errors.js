/** Errors the shop raises on purpose; anything else is a bug or an outage. */
export class ShopError extends Error {
  constructor(code, message) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

export class ValidationError extends ShopError {
  constructor(message) {
    super('invalid', message);
  }
}

export class NotFoundError extends ShopError {
  constructor(entity, id) {
    super('not-found', `${entity} ${id} does not exist`);
    this.entity = entity;
    this.id = id;
  }
}

export class DuplicateEmailError extends ShopError {
  constructor(email) {
    super('duplicate-email', `a customer with email ${email} already exists`);
    this.email = email;
  }
}

export class InsufficientStockError extends ShopError {
  constructor(productId, requested, available) {
    super('insufficient-stock', `product ${productId}: ${requested} requested, ${available} in stock`);
    this.productId = productId;
    this.requested = requested;
    this.available = available;
  }
}

export class InvalidStateError extends ShopError {
  constructor(orderId, status, action) {
    super('invalid-state', `order ${orderId} is ${status} and cannot be ${action}`);
    this.orderId = orderId;
    this.status = status;
  }
}
