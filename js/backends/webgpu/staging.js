// Pooled MAP_READ staging buffers for device-to-host reads. Reads reuse a
// buffer of the right size class instead of creating and destroying one per
// download; the pool keeps at most `maxPooledBytes` idle.

import { BufferUsage } from './gpu_flags.js';

const MIN_STAGING_BYTES = 4096;

export class StagingPool {
  /** @param {GPUDevice} device */
  constructor(device, maxPooledBytes = 64 * 1024 * 1024) {
    this.device = device;
    this.maxPooledBytes = maxPooledBytes;
    this.pooledBytes = 0;
    /** size class (a power of two) -> idle buffers */
    this.idle = new Map();
  }

  /** A mappable buffer of at least nbytes (a multiple of 4). */
  acquire(nbytes) {
    const size = sizeClass(nbytes);
    const list = this.idle.get(size);
    if (list?.length) {
      this.pooledBytes -= size;
      return list.pop();
    }
    const usage = BufferUsage.MAP_READ | BufferUsage.COPY_DST;
    return this.device.createBuffer({ size, usage, label: 'webffi staging' });
  }

  /** Returns an unmapped buffer to the pool (or destroys it when full). */
  release(buffer) {
    const size = buffer.size;
    if (this.pooledBytes + size > this.maxPooledBytes) {
      buffer.destroy();
      return;
    }
    let list = this.idle.get(size);
    if (!list) this.idle.set(size, (list = []));
    list.push(buffer);
    this.pooledBytes += size;
  }

  destroy() {
    for (const list of this.idle.values()) for (const b of list) b.destroy();
    this.idle.clear();
    this.pooledBytes = 0;
  }
}

function sizeClass(nbytes) {
  if (nbytes <= MIN_STAGING_BYTES) return MIN_STAGING_BYTES;
  // Powers of two up to 64 MiB, then whole MiBs: large reads waste little.
  if (nbytes <= 64 * 1024 * 1024) return 2 ** Math.ceil(Math.log2(nbytes));
  const mib = 1024 * 1024;
  return Math.ceil(nbytes / mib) * mib;
}
