// helpers.mjs: shared setup for the node tests of web/emulation/.
import v8 from 'node:v8';
import vm from 'node:vm';
import { createEmulatedGPU } from '../../web/emulation/webgpu-emulated.js';

export const BU = { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128 };

/** A gc() function whether or not node was started with --expose-gc. */
export function getGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc');
}

export const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Run gc and let FinalizationRegistry callbacks run until `done()` or `rounds` tries. */
export async function collectUntil(done, rounds = 20) {
  const gc = getGc();
  for (let i = 0; i < rounds; i++) {
    gc();
    await tick();
    await tick();
    if (done()) return true;
  }
  return done();
}

export async function newDevice(options = {}) {
  const gpu = createEmulatedGPU({ logUncapturedErrors: false, ...options });
  const adapter = await gpu.requestAdapter();
  return adapter.requestDevice();
}

// y[i] = a[i] + uniforms.k. Shapes: a, y: array<f32>; uniforms: 16 B.
export const KERNEL = `
struct Uniforms { n: u32, k: f32, p0: u32, p1: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> uniforms: Uniforms;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < uniforms.n) { y[gid.x] = a[gid.x] + uniforms.k; }
}
`;

export function makeDecodeState(device, n = 256) {
  const module = device.createShaderModule({ code: KERNEL });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const a = device.createBuffer({ size: n * 4, usage: BU.STORAGE | BU.COPY_DST | BU.COPY_SRC });
  const y = device.createBuffer({ size: n * 4, usage: BU.STORAGE | BU.COPY_SRC });
  const u = device.createBuffer({ size: 16, usage: BU.UNIFORM | BU.COPY_DST });
  const readback = device.createBuffer({ size: n * 4, usage: BU.MAP_READ | BU.COPY_DST });
  return { n, module, pipeline, a, y, u, readback };
}

/** Encode one command buffer of `count` dispatches, each with a fresh bind group (ORT style). */
export function encodeDispatches(device, s, count) {
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  for (let i = 0; i < count; i++) {
    const bg = device.createBindGroup({
      layout: s.pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: s.a } },
        { binding: 1, resource: { buffer: s.y } },
        { binding: 2, resource: { buffer: s.u, offset: 0, size: 16 } },
      ],
    });
    pass.setPipeline(s.pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(Math.ceil(s.n / 64));
  }
  pass.end();
  return enc;
}
