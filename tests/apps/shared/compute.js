// A small WebGPU compute loop, as a classic script: defines self.computeSteps (page or worker).
//
// Setup: 3 createBuffer (two storage buffers of 64 f32, one MAP_READ staging buffer),
// 1 createShaderModule, 1 createComputePipeline (layout 'auto').
// Each step s: 1 writeBuffer (64 f32 = 256 bytes, all = s), 1 createCommandEncoder, one compute
// pass of 3 dispatches, each with its own new bind group (3 createBindGroup, 3 dispatchWorkgroups:
// a->b, b->a, a->b with y = 2x + 1), 1 copyBufferToBuffer, 1 submit of 1 command buffer, then
// 1 mapAsync of the staging buffer (resolved = the step's end), read, unmap.
// With real WebGPU every element read back is 8s + 7. After each step: performance.mark
// ('compute-step') and console.debug('compute step <s> done').
/* global self */
(function () {
  'use strict';
  const N = 64;
  const WGSL = `
    @group(0) @binding(0) var<storage, read> src: array<f32>;
    @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
      if (id.x < arrayLength(&dst)) { dst[id.x] = src[id.x] * 2.0 + 1.0; }
    }`;

  /** Per-step WebGPU calls of computeSteps (the counts the probes must see). */
  self.COMPUTE_CALLS_PER_STEP = { createBindGroup: 3, dispatchWorkgroups: 3, submit: 1, writeBuffer: 1,
    writeBufferBytes: 256, createCommandEncoder: 1, mapAsync: 1, createBuffer: 0 };

  /**
   * Run `steps` steps on a new device from `gpu` (navigator.gpu). Resolves to
   * {values: number[] (element 0 read back per step), msPerStep: number[]} or {noAdapter: true}.
   */
  self.computeSteps = async function (gpu, steps) {
    const adapter = await gpu.requestAdapter();
    if (!adapter) return { noAdapter: true };
    const device = await adapter.requestDevice();
    const U = self.GPUBufferUsage;
    const bytes = N * 4;
    const a = device.createBuffer({ size: bytes, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
    const b = device.createBuffer({ size: bytes, usage: U.STORAGE | U.COPY_SRC });
    const staging = device.createBuffer({ size: bytes, usage: U.MAP_READ | U.COPY_DST });
    const module = device.createShaderModule({ code: WGSL });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const layout = pipeline.getBindGroupLayout(0);
    const out = { values: [], msPerStep: [] };
    for (let s = 0; s < steps; s++) {
      const t0 = performance.now();
      device.queue.writeBuffer(a, 0, new Float32Array(N).fill(s));
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      for (const [src, dst] of [[a, b], [b, a], [a, b]]) {
        pass.setBindGroup(0, device.createBindGroup({ layout, entries: [
          { binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }] }));
        pass.dispatchWorkgroups(1);
      }
      pass.end();
      enc.copyBufferToBuffer(b, 0, staging, 0, bytes);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(self.GPUMapMode.READ);
      out.values.push(new Float32Array(staging.getMappedRange())[0]);
      staging.unmap();
      out.msPerStep.push(performance.now() - t0);
      // what an app with its own instrumentation might emit (used by --step-on mark:/console:)
      performance.mark('compute-step');
      console.debug(`compute step ${s} done`);
    }
    device.destroy();
    return out;
  };
})();
