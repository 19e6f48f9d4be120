// Remote objects: what a worker session's call returns when its result
// cannot (or should not) travel by value: a GPU tensor, a Function, a Module,
// any object the worker keeps. A RemoteObject names the object in the
// worker's per-session table by id; the worker holds it until the handle is
// disposed (dispose(), `using`, or the FinalizationRegistry backstop) or the
// session ends. Passing it to a later call on the same session hands the
// worker its own object; anything else refuses it.
//
// The description (`meta`) comes from the peer: it is checked here before a
// handle is made, and the handle's id is only ever looked up by the worker.
import { REMOTE_REF } from './clone.js';
import { FFITypeError, ValueError, makeError } from './errors.js';

/** The session a handle belongs to, and what it does for it (see Session). */
const OWNER = Symbol('owner');

const KINDS = new Set(['tensor', 'function', 'module', 'object']);
const MAX_NDIM = 64;
const MAX_NAME = 256;

/** Handle -> its session's side (subclasses reach it through ownerOf). */
const owners = new WeakMap();
const ownerOf = (h) => owners.get(h);

/** Releases handles that were never disposed, once they are collected. */
const backstop = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ owner, id }) => owner.release(id))
  : null;

/** A remote object handle; made by sessions, never by users. */
export class RemoteObject {
  #owner;
  #id;
  #type;
  #disposed = false;

  constructor(owner, id, type) {
    this.#owner = owner;
    this.#id = id;
    this.#type = type;
    owners.set(this, owner);
    backstop?.register(this, { owner, id }, this);
  }

  /** The object's id in its session (unique for the session's life). */
  get id() {
    return this.#id;
  }

  /** The type of the object in the worker, e.g. `ffi.Tensor`, `ffi.Function`, `ffi.Module`. */
  get type() {
    return this.#type;
  }

  get disposed() {
    return this.#disposed;
  }

  /** Whether the session it belongs to has ended (closed, or the worker is gone). */
  get sessionClosed() {
    return this.#owner.closed;
  }

  /**
   * The object's value, brought back by value (a GPU tensor is downloaded
   * in the worker first). Resolves as session.call does.
   * @param {{ timeout?: number, signal?: AbortSignal }} [options]
   */
  fetch(options) {
    return this.#owner.op('fetch', [this], options);
  }

  /** Releases the object in the worker (idempotent; nothing to do once the session ended). */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    backstop?.unregister(this);
    this.#owner.release(this.#id);
  }

  [Symbol.dispose]() {
    this.dispose();
  }

  toString() {
    return `<remote ${this.#type} #${this.#id}${this.#disposed ? ' disposed' : ''}>`;
  }

  /** Internal (sessions): the encoded reference, after checking the handle may be used on `session`. */
  static refFor(h, owner) {
    if (!(#owner in h)) throw new FFITypeError('an object made to look like a remote handle is not one');
    const name = `remote \`${h.#type}\` #${h.#id}`;
    if (h.#owner !== owner) {
      throw new FFITypeError(`${name} belongs to another worker session; pass it only to calls on the session that made it (or send its value: \`await ref.fetch()\`)`);
    }
    if (h.#disposed) throw new ValueError(`Cannot use a disposed ${name}`);
    if (owner.closed) throw owner.closedError(name);
    return ['R', h.#id];
  }
}
RemoteObject.prototype[REMOTE_REF] = true;
Object.defineProperty(RemoteObject.prototype, Symbol.toStringTag, { value: 'RemoteObject' });

/** A remote tensor: shape, dtype and device are known here; the data stays in the worker. */
export class RemoteTensor extends RemoteObject {
  constructor(owner, id, type, meta) {
    super(owner, id, type);
    this.shape = meta.shape;
    this.dtype = meta.dtype;
    this.device = meta.device;
    Object.freeze(this.shape);
  }

  /** The number of elements. */
  get size() {
    return this.shape.reduce((a, n) => a * n, 1);
  }

  /**
   * The tensor's data as a typed array (downloaded in the worker when it
   * lives on a device, then transferred).
   * @param {{ timeout?: number, signal?: AbortSignal }} [options]
   */
  async data(options) {
    const v = await this.fetch(options);
    if (ArrayBuffer.isView(v?.data)) return v.data; // a tensor description (no runtime on this side)
    try {
      return v.toTypedArray(); // a CPU tensor of the session's runtime
    } finally {
      v.dispose();
    }
  }
}

/** A remote function (an ffi.Function or a JS function the worker keeps). */
export class RemoteFunction extends RemoteObject {
  /**
   * Calls it in the worker; resolves as session.call does.
   * @param {unknown[]} args
   * @param {{ timeout?: number, signal?: AbortSignal, transfer?: boolean, result?: 'auto' | 'remote' | 'value' }} [options]
   */
  call(args = [], options) {
    if (!Array.isArray(args)) throw new FFITypeError('RemoteFunction.call(args): args is an array');
    return this.#call(args, options);
  }

  #call(args, options) {
    return ownerOf(this).op('call', [this, ...args], options);
  }
}

/** A remote module: its functions are remote functions. */
export class RemoteModule extends RemoteObject {
  /**
   * The module's function `name`, as a RemoteFunction; when it has none,
   * rejects with an AttributeError, or resolves null with `{ optional: true }`.
   */
  getFunction(name, options) {
    if (typeof name !== 'string') throw new FFITypeError(`RemoteModule.getFunction(name): name is a string, not ${typeof name}`);
    const { optional, ...callOptions } = options ?? {};
    return ownerOf(this).op('getFunction', optional ? [this, name, true] : [this, name], callOptions);
  }
}

/**
 * The handle for a reference received from the worker: `meta` is what the
 * worker said the object is, checked here. `owner` is the session's side:
 * { op(op, args, options), release(id), closed, closedError(what) }.
 */
export function makeRemote(owner, id, meta) {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    throw new ValueError('a remote object reference carries a description object');
  }
  const kind = meta.kind;
  const type = meta.type;
  if (!KINDS.has(kind)) throw new ValueError(`a remote object's kind is one of ${[...KINDS].join(', ')}`);
  if (typeof type !== 'string' || type === '' || type.length > MAX_NAME) throw new ValueError(`a remote object's type is a non-empty string of at most ${MAX_NAME} characters`);
  let h;
  if (kind === 'tensor') {
    const { shape, dtype, device } = meta;
    if (!Array.isArray(shape) || shape.length > MAX_NDIM || !shape.every((n) => Number.isSafeInteger(n) && n >= 0)) {
      throw new ValueError(`a remote tensor's shape is an array of at most ${MAX_NDIM} non-negative integers`);
    }
    for (const [k, v] of [['dtype', dtype], ['device', device]]) {
      if (typeof v !== 'string' || v === '' || v.length > MAX_NAME) throw new ValueError(`a remote tensor's ${k} is a non-empty string of at most ${MAX_NAME} characters`);
    }
    h = new RemoteTensor(owner, id, type, { shape: [...shape], dtype, device });
  } else if (kind === 'function') {
    h = new RemoteFunction(owner, id, type);
  } else if (kind === 'module') {
    h = new RemoteModule(owner, id, type);
  } else {
    h = new RemoteObject(owner, id, type);
  }
  return h;
}

/** True for the handles made here. */
export function isRemote(v) {
  return v instanceof RemoteObject;
}

/** The error a handle of a session that has ended fails with. */
export function endedError(what, why) {
  return makeError('RPCError', `webffi session: ${what} belongs to a session that has ended (${why})`);
}
