// WebGPU flag values from the specification. Node's `webgpu` package does not
// install GPUBufferUsage/GPUMapMode as globals, so the backend uses these.
export const BufferUsage = Object.freeze({
  MAP_READ: 0x1,
  COPY_SRC: 0x4,
  COPY_DST: 0x8,
  UNIFORM: 0x40,
  STORAGE: 0x80,
});
export const MapMode = Object.freeze({ READ: 0x1 });
