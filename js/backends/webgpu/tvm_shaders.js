// TVM's WebGPU shader protocol, served by this backend: a library TVM
// compiled hands over each kernel as its function info (name, argument
// types, launch-parameter tags) and WGSL, and gets back a function it calls
// with the buffer arguments (allocation handles), the scalar arguments and
// the launch extents. The conventions are those of TVM's WebGPU codegen:
// - buffers bind at 0..n-1 in argument order, read-only unless the
//   `paramWriteAccess:[...]` tag marks them written; the scalars and, last,
//   the x extent as u32 (`packGridDimX`) fill a uniform struct at binding n,
//   one 32-bit word each (int, uint and float arguments are 32-bit);
// - `blockIdx.x/y/z` tags take grid extents, `threadIdx.*` tags the block
//   extents (fixed in the shader's @workgroup_size; not used here);
// - blockIdx.z is reserved: an x extent past 65,535 is folded into z, halving
//   x until it fits, and the shader skips the padding it gets from that.
// Dispatches go into the backend's command batch, their scalars into the
// batch's uniform ring (one slot per dispatch) when they fit in a slot.
import { PARAM_BYTES } from './batch.js';
import { BufferUsage } from './gpu_flags.js';

const COMPUTE = 0x4; // GPUShaderStage.COMPUTE
const MAX_X = 1 << 16; // extents from here on are folded into z (TVM's rule)
const BIND_GROUP_CACHE = 64; // per kernel: TVM reuses its buffers from call to call
const WGSL_SCALAR_BYTES = { f32: 4, i32: 4, u32: 4, f16: 2, bool: 4 };

/**
 * What a TVM WGSL kernel needs from the device: workgroup size and
 * invocations, storage buffers, workgroup memory, features.
 */
export function shaderNeeds(code) {
  const wg = /@workgroup_size\(\s*([^)]*)\)/.exec(code);
  const size = wg ? wg[1].split(',').map((v) => Number.parseInt(v, 10) || 1) : [1];
  while (size.length < 3) size.push(1);
  let workgroupBytes = 0;
  for (const m of code.matchAll(/var<workgroup>\s+\w+\s*:\s*array<\s*(?:vec(\d)<\s*)?(\w+)\s*>?\s*,\s*(\d+)\s*>/g)) {
    workgroupBytes += (WGSL_SCALAR_BYTES[m[2]] ?? 4) * Number(m[1] ?? 1) * Number(m[3]);
  }
  const features = [];
  if (/\benable\s+f16\s*;/.test(code)) features.push('shader-f16');
  if (/\benable\s+subgroups\s*;/.test(code)) features.push('subgroups');
  return {
    maxComputeWorkgroupSizeX: size[0],
    maxComputeWorkgroupSizeY: size[1],
    maxComputeWorkgroupSizeZ: size[2],
    maxComputeInvocationsPerWorkgroup: size[0] * size[1] * size[2],
    maxStorageBuffersPerShaderStage: (code.match(/var<storage\b/g) ?? []).length,
    maxComputeWorkgroupStorageSize: workgroupBytes,
    features,
  };
}

/** The largest of each need over several kernels. */
export function combineNeeds(list) {
  const total = { features: [] };
  for (const needs of list) {
    for (const [k, v] of Object.entries(needs)) {
      if (k === 'features') total.features = [...new Set([...total.features, ...v])];
      else total[k] = Math.max(total[k] ?? 0, v);
    }
  }
  return total;
}

/** What `needs` asks beyond `device`'s limits and features, as readable lines ([] when it fits). */
export function missingNeeds(device, needs) {
  const missing = [];
  for (const [k, v] of Object.entries(needs)) {
    if (k === 'features') {
      for (const f of v) if (!device.features.has(f)) missing.push(`the feature ${f}`);
    } else if (v > device.limits[k]) {
      missing.push(`${k} ${v} (the device has ${device.limits[k]})`);
    }
  }
  return missing;
}

/** Parses TVM's function info; throws what is wrong with it. */
function parseInfo(finfo, fail) {
  const info = typeof finfo === 'string' ? JSON.parse(finfo) : finfo;
  if (!info || typeof info.name !== 'string' || !Array.isArray(info.arg_types) || !Array.isArray(info.launch_param_tags)) {
    throw fail('ValueError', 'WebGPUCreateShader: the function info needs name, arg_types and launch_param_tags');
  }
  const dims = []; // per launch argument: 0-2 grid x/y/z, 3-5 block x/y/z
  let writes = [];
  for (const tag of info.launch_param_tags) {
    const m = /^(blockIdx|threadIdx)\.([xyz])$/.exec(tag);
    if (m) dims.push((m[1] === 'blockIdx' ? 0 : 3) + 'xyz'.indexOf(m[2]));
    else if (tag.startsWith('paramWriteAccess:')) writes = JSON.parse(tag.slice('paramWriteAccess:'.length));
    else throw fail('ValueError', `${info.name}: unknown launch parameter tag ${tag}`);
  }
  const buffers = [];
  const scalars = []; // [argument index, 0 int / 1 uint / 2 float]
  info.arg_types.forEach((t, i) => {
    if (t === 'handle') buffers.push(i);
    else if (/^int\d*$/.test(t)) scalars.push([i, 0]);
    else if (/^uint\d*$/.test(t)) scalars.push([i, 1]);
    else if (/^float\d*$/.test(t)) scalars.push([i, 2]);
    else throw fail('TypeError', `${info.name}: cannot pass an argument of type ${t} to a WebGPU shader`);
  });
  if (writes.length !== buffers.length) {
    throw fail('ValueError', `${info.name}: paramWriteAccess lists ${writes.length} buffers, the kernel takes ${buffers.length}`);
  }
  return { name: info.name, dims, writes, buffers, scalars };
}

/**
 * @param {object} be the WebGPU backend (js/backends/webgpu/index.js)
 * @param {(handle: number, what: string) => object} allocationOf the allocation behind a handle C holds
 */
export function tvmShaders(be, allocationOf) {
  const fail = (kind, message) => be._error(kind, message);

  /** The pipeline of one kernel and the function that dispatches it. */
  function build(finfo, code, asyncMode) {
    const state = be._current('WebGPUCreateShader');
    const device = state.device;
    const info = parseInfo(finfo, fail);
    const missing = missingNeeds(device, shaderNeeds(code));
    if (missing.length) {
      throw fail('RuntimeError', `${info.name} needs more than this WebGPU device offers: ${missing.join(', ')}`);
    }
    const nb = info.buffers.length;
    const ns = info.scalars.length;
    const paramBytes = 4 * (ns + 1);
    const ring = paramBytes <= PARAM_BYTES; // scalars in a slot of the batch's ring, else a buffer per dispatch
    const entries = info.buffers.map((_, i) => ({
      binding: i, visibility: COMPUTE, buffer: { type: info.writes[i] ? 'storage' : 'read-only-storage' },
    }));
    entries.push({ binding: nb, visibility: COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: ring } });
    const layout = device.createBindGroupLayout({ entries });
    const descriptor = {
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module: device.createShaderModule({ code }), entryPoint: info.name },
    };
    const made = (pipeline) => dispatcher(state, info, pipeline, layout, ring, paramBytes);
    if (asyncMode) return device.createComputePipelineAsync(descriptor).then(made);
    return made(device.createComputePipeline(descriptor));
  }

  function dispatcher(state, info, pipeline, layout, ring, paramBytes) {
    const { buffers, scalars, dims, name } = info;
    const nb = buffers.length;
    const nargs = nb + scalars.length + dims.length;
    const groups = new Map(); // allocation ids -> bind group
    const bindings = new Array(nb + 1);
    const own = ring ? null : { words: new ArrayBuffer(paramBytes) };
    const maxDim = state.limits.maxComputeWorkgroupsPerDimension;
    return function tvmDispatch(...args) {
      if (be._current(name) !== state) throw fail('RuntimeError', `${name}: its WebGPU device was lost or replaced; load the library's pipelines again`);
      if (args.length !== nargs) throw fail('TypeError', `${name} takes ${nargs} arguments, got ${args.length}`);
      const extent = [1, 1, 1];
      for (let i = 0; i < dims.length; i++) {
        const d = dims[i];
        if (d < 3) extent[d] = args[nb + scalars.length + i];
      }
      if (extent[2] !== 1) throw fail('ValueError', `${name}: blockIdx.z is reserved for folding large x extents`);
      const packDimX = extent[0];
      let x = packDimX;
      let z = 1;
      while (x >= MAX_X) {
        x = Math.ceil(x / 2);
        z *= 2;
      }
      if (x > maxDim || extent[1] > maxDim || z > maxDim) {
        throw fail('ValueError', `${name}: a grid of ${packDimX} x ${extent[1]} workgroups exceeds the device's ${maxDim} per dimension`);
      }
      const batch = state.batch;
      let key = '';
      for (let i = 0; i < nb; i++) {
        const a = allocationOf(args[buffers[i]], name);
        bindings[i] = a;
        key += `${a.id},`;
      }
      let u32;
      let f32;
      let w;
      if (ring) {
        w = batch.reserveParams();
        u32 = batch.u32;
        f32 = batch.f32;
      } else {
        w = 0;
        u32 = new Uint32Array(own.words);
        f32 = new Float32Array(own.words);
      }
      for (let i = 0; i < scalars.length; i++) {
        const [arg, kind] = scalars[i];
        const v = args[arg];
        if (kind === 2) f32[w + i] = v;
        else u32[w + i] = Number(v); // int and uint: the same 32 bits
      }
      u32[w + scalars.length] = packDimX;
      if (ring) {
        let group = groups.get(key);
        if (group === undefined) {
          if (groups.size >= BIND_GROUP_CACHE) groups.clear();
          group = bindGroup(state.device, layout, bindings, nb, batch.paramsBinding);
          groups.set(key, group);
        }
        batch.dispatch(pipeline, group, x, extent[1], z);
      } else {
        const params = state.device.createBuffer({ size: paramBytes, usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST });
        state.device.queue.writeBuffer(params, 0, own.words);
        batch.dispatchStatic(pipeline, bindGroup(state.device, layout, bindings, nb, { buffer: params }), x, extent[1], z);
        batch.destroyAfterSubmit(params);
      }
    };
  }

  function bindGroup(device, layout, allocations, nb, params) {
    const entries = new Array(nb + 1);
    for (let i = 0; i < nb; i++) entries[i] = { binding: i, resource: { buffer: allocations[i].buffer } };
    entries[nb] = { binding: nb, resource: params };
    return device.createBindGroup({ layout, entries });
  }

  return {
    /** The dispatch function of a kernel, its pipeline compiled now. */
    create: (finfo, code) => build(finfo, code, false),
    /** The same, its pipeline compiled asynchronously. */
    createAsync: async (finfo, code) => build(finfo, code, true),
  };
}
