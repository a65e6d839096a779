// Page script of the page-and-worker test app: a GPUDevice of its own, one bind group and one
// dispatch per step of the worker (worker.js), which does the rest of the GPU work.
(async () => {
  const status = document.getElementById('status');
  const params = new URL(location.href).searchParams;
  const steps = Number(params.get('steps') || 8);
  const readback = params.get('page') === 'readback';
  try {
    if (!navigator.gpu) { status.textContent = 'failed: no navigator.gpu'; return; }
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) { status.textContent = 'failed: no adapter'; return; }
    const device = await adapter.requestDevice();
    const U = GPUBufferUsage;
    const a = device.createBuffer({ size: 256, usage: U.STORAGE | U.COPY_SRC });
    const staging = device.createBuffer({ size: 256, usage: U.MAP_READ | U.COPY_DST });
    const module = device.createShaderModule({ code: `
      @group(0) @binding(0) var<storage, read_write> a: array<f32>;
      @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
        if (id.x < arrayLength(&a)) { a[id.x] = a[id.x] + 1.0; }
      }` });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    let pageSteps = 0;
    const worker = new Worker('worker.js');
    worker.onmessage = async (e) => {
      if (e.data.status) {
        status.textContent = e.data.status;
        document.getElementById('result').textContent = JSON.stringify({ ...e.data.result, pageSteps });
        return;
      }
      // one step of the worker ended: the page's share of the work for it
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer: a } }] }));
      pass.dispatchWorkgroups(1);
      pass.end();
      if (readback) enc.copyBufferToBuffer(a, 0, staging, 0, 256);
      device.queue.submit([enc.finish()]);
      pageSteps += 1;
      if (readback) {
        await staging.mapAsync(GPUMapMode.READ);
        staging.unmap();
      }
    };
    worker.onerror = (e) => { status.textContent = `failed: worker error ${e.message || ''}`; };
    worker.postMessage({ steps });
    status.textContent = 'running';
  } catch (err) {
    status.textContent = `failed: ${err && err.message || err}`;
  }
})();
