// Batched command encoding: dispatches and device copies go into one open
// command encoder (dispatches share one compute pass) and are submitted
// together, at the latest when the current JS task ends (a microtask), and
// always before anything that must observe their results (uploads, reads,
// sync). Kernel parameters are written into a host mirror of a uniform ring
// buffer, one 256-byte slot per dispatch (selected by a dynamic offset), and
// uploaded with a single writeBuffer just before the submit, so no
// per-dispatch buffers exist and bind groups can be reused. Kernels whose
// parameters depend only on shapes bind a uniform buffer made once per
// shape instead (dispatchStatic): no slot, no dynamic offset. A pass sets a
// pipeline only when it changes.

import { BufferUsage } from './gpu_flags.js';

const SLOT_BYTES = 256; // >= every adapter's minUniformBufferOffsetAlignment
const RING_SLOTS = 256;
export const PARAM_BYTES = 64; // the largest kernel parameter struct
// A long synchronous chain is submitted in pieces of this many dispatches,
// so the GPU starts on it while the rest is recorded.
const MAX_DISPATCHES = 256;
const RESOLVED = Promise.resolve();

export class CommandBatch {
  /** @param {GPUDevice} device */
  constructor(device) {
    this.device = device;
    this.ring = device.createBuffer({
      size: SLOT_BYTES * RING_SLOTS,
      usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST,
      label: 'webffi kernel parameters',
    });
    this.mirror = new ArrayBuffer(SLOT_BYTES * RING_SLOTS);
    this.u32 = new Uint32Array(this.mirror);
    this.f32 = new Float32Array(this.mirror);
    /** Bind groups bind the ring with a dynamic offset that selects the slot. */
    this.paramsBinding = { buffer: this.ring, offset: 0, size: PARAM_BYTES };
    this.dynamicOffset = new Uint32Array(1);
    this.slots = 0;
    this.encoder = null;
    this.pass = null;
    this.pipeline = null; // the pipeline set last in the open pass
    this.dispatches = 0; // recorded since the last submit
    this.scheduled = false;
    this.afterSubmit = []; // buffers to destroy once their commands are submitted
    this.flush = this.flush.bind(this);
  }

  /**
   * Reserves the parameter slot for the next dispatch and returns the index
   * of its first 32-bit word in `u32`/`f32`.
   */
  reserveParams() {
    if (this.slots === RING_SLOTS) this.flush();
    this.u32.fill(0, (this.slots * SLOT_BYTES) / 4, (this.slots * SLOT_BYTES + PARAM_BYTES) / 4);
    return (this.slots * SLOT_BYTES) / 4;
  }

  /** Records a dispatch; its parameters are in the slot reserved last. */
  dispatch(pipeline, bindGroup, groupsX, groupsY, groupsZ = 1) {
    this.dynamicOffset[0] = this.slots * SLOT_BYTES;
    this.slots++;
    const pass = this.#computePass(pipeline);
    pass.setBindGroup(0, bindGroup, this.dynamicOffset, 0, 1);
    pass.dispatchWorkgroups(groupsX, groupsY, groupsZ);
  }

  /** Records a dispatch whose bind group holds its own parameters. */
  dispatchStatic(pipeline, bindGroup, groupsX, groupsY, groupsZ = 1) {
    if (this.dispatches >= MAX_DISPATCHES) this.flush();
    const pass = this.#computePass(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(groupsX, groupsY, groupsZ);
  }

  copy(src, srcOffset, dst, dstOffset, nbytes) {
    this.#endPass();
    this.#openEncoder().copyBufferToBuffer(src, srcOffset, dst, dstOffset, nbytes);
  }

  /** Destroys a buffer once the commands recorded so far are submitted. */
  destroyAfterSubmit(buffer) {
    if (this.encoder) this.afterSubmit.push(buffer);
    else buffer.destroy();
  }

  get pending() {
    return this.encoder !== null;
  }

  flush() {
    this.scheduled = false;
    if (!this.encoder) return;
    this.#endPass();
    const queue = this.device.queue;
    if (this.slots) queue.writeBuffer(this.ring, 0, this.mirror, 0, this.slots * SLOT_BYTES);
    queue.submit([this.encoder.finish()]);
    this.encoder = null;
    this.slots = 0;
    this.dispatches = 0;
    for (const b of this.afterSubmit) b.destroy();
    this.afterSubmit.length = 0;
  }

  destroy() {
    this.encoder = null;
    this.pass = null;
    this.pipeline = null;
    this.ring.destroy();
  }

  #openEncoder() {
    if (!this.encoder) {
      this.encoder = this.device.createCommandEncoder();
      if (!this.scheduled) {
        this.scheduled = true;
        // Not queueMicrotask: Node wraps each of its callbacks in an AsyncResource.
        RESOLVED.then(this.flush);
      }
    }
    return this.encoder;
  }

  #computePass(pipeline) {
    this.dispatches++;
    const pass = (this.pass ??= this.#openEncoder().beginComputePass());
    if (this.pipeline !== pipeline) {
      pass.setPipeline(pipeline);
      this.pipeline = pipeline;
    }
    return pass;
  }

  #endPass() {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
      this.pipeline = null;
    }
  }
}
