// Classic worker of the page-and-worker test app: `steps` steps of 4 dispatches with a new bind
// group each, ending in mapAsync; after each step it tells the page (which does 1 more
// dispatch) and waits 30 ms, as an app paced by its frames or tokens would.
/* global self */
self.onmessage = async (e) => {
  const steps = e.data.steps;
  const adapter = await self.navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const U = self.GPUBufferUsage;
  const a = device.createBuffer({ size: 256, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const b = device.createBuffer({ size: 256, usage: U.STORAGE | U.COPY_SRC });
  const staging = device.createBuffer({ size: 256, usage: U.MAP_READ | U.COPY_DST });
  const module = device.createShaderModule({ code: `
    @group(0) @binding(0) var<storage, read> src: array<f32>;
    @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
      if (id.x < arrayLength(&dst)) { dst[id.x] = src[id.x] * 2.0 + 1.0; }
    }` });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const values = [];
  for (let s = 0; s < steps; s++) {
    device.queue.writeBuffer(a, 0, new Float32Array(64).fill(s));
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    for (const [src, dst] of [[a, b], [b, a], [a, b], [b, a]]) {
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
        { binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }] }));
      pass.dispatchWorkgroups(1);
    }
    pass.end();
    enc.copyBufferToBuffer(a, 0, staging, 0, 256);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(self.GPUMapMode.READ);
    values.push(new Float32Array(staging.getMappedRange())[0]);
    staging.unmap();
    self.postMessage({ step: s });
    await new Promise((r) => setTimeout(r, 30));
  }
  self.postMessage({ status: 'done', result: { values } });
};
