// Small immutable JS values for the ABI's POD types, and wrappers that force
// how a JS number crosses (int or float).

const inspect = Symbol.for('nodejs.util.inspect.custom');

/** A DLDevice: `cpu:0`, `webgpu:0`. */
export class Device {
  constructor(deviceType, deviceId, name) {
    this.deviceType = deviceType;
    this.deviceId = deviceId;
    this.name = name;
    Object.freeze(this);
  }

  toString() {
    return `${this.name}:${this.deviceId}`;
  }

  toJSON() {
    return this.toString();
  }

  [inspect]() {
    return `Device(${this})`;
  }

  equals(other) {
    return other instanceof Device && other.deviceType === this.deviceType &&
      other.deviceId === this.deviceId;
  }
}

/** A DLDataType: `float32`, `int64`, `float32x4`, `bool`. */
export class DataType {
  constructor(code, bits, lanes, text) {
    this.code = code;
    this.bits = bits;
    this.lanes = lanes;
    this.text = text;
    Object.freeze(this);
  }

  toString() {
    return this.text;
  }

  toJSON() {
    return this.text;
  }

  [inspect]() {
    return `DataType(${this.text})`;
  }

  equals(other) {
    return other instanceof DataType && other.code === this.code && other.bits === this.bits &&
      other.lanes === this.lanes;
  }
}

/** Forces a JS number (or BigInt) to cross as an FFI int. */
export class IntValue {
  constructor(value) {
    if (typeof value === 'number' && !Number.isInteger(value)) {
      throw new RangeError(`asInt: ${value} is not an integer`);
    }
    if (typeof value !== 'number' && typeof value !== 'bigint') {
      throw new TypeError(`asInt expects a number or bigint, got ${typeof value}`);
    }
    this.value = value;
    Object.freeze(this);
  }
}

/** Forces a JS number to cross as an FFI float. */
export class FloatValue {
  constructor(value) {
    if (typeof value !== 'number') throw new TypeError(`asFloat expects a number, got ${typeof value}`);
    this.value = value;
    Object.freeze(this);
  }
}

export const asInt = (value) => new IntValue(value);
export const asFloat = (value) => new FloatValue(value);
