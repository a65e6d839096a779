// Page script of the render test app: a small WebGPU render loop with what a renderer does per
// frame into a 64×64 render target, each kind of call a known number of times (tests/apps/README.md):
//   set-up (frame 0 only): 1 shader module, 2 render pipelines (createRenderPipeline and
//     createRenderPipelineAsync), 4 labelled buffers (vertices, indices, indirect args, uniforms),
//     1 bind group with a dynamic-offset uniform binding;
//   every frame: 1 writeBuffer of 16 bytes (the frame's colour, at a 256-byte dynamic offset),
//     1 command encoder, 1 render pass, 2 setBindGroup calls each with 1 dynamic offset,
//     draw, drawIndexed, drawIndirect, drawIndexedIndirect (1 each), 1 submit, then
//     performance.mark('frame') (the step boundary: `app --step-on mark:frame`).
// No compute: the probes must not show it as "0 dispatches" with nothing else.
(async () => {
  const status = document.getElementById('status');
  const frames = Number(new URL(location.href).searchParams.get('steps') || 8);
  try {
    if (!navigator.gpu) { status.textContent = 'failed: no navigator.gpu'; return; }
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) { status.textContent = 'failed: no adapter'; return; }
    const device = await adapter.requestDevice();
    const errors = [];
    device.addEventListener('uncapturederror', (e) => errors.push(e.error.message));
    // The frame's colour target: a texture, as a renderer's offscreen render target (a canvas
    // context fails in headless Chromium on SwiftShader here: "A valid external Instance
    // reference no longer exists").
    const format = 'rgba8unorm';
    const target = device.createTexture({ label: 'frame.target', size: [64, 64], format, usage: GPUTextureUsage.RENDER_ATTACHMENT });
    const view = target.createView();
    status.textContent = 'running';

    const module = device.createShaderModule({ label: 'triangle', code: `
      struct Frame { color: vec4<f32> }
      @group(0) @binding(0) var<uniform> frame: Frame;
      @vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> { return vec4<f32>(p, 0.0, 1.0); }
      @fragment fn fs() -> @location(0) vec4<f32> { return frame.color; }` });
    const align = device.limits.minUniformBufferOffsetAlignment;
    const layout = device.createBindGroupLayout({ entries: [
      { binding: 0, visibility: GPUShaderStage.FRAGMENT, buffer: { type: 'uniform', hasDynamicOffset: true } }] });
    const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
    const descriptor = (label, topology) => ({
      label, layout: pipelineLayout,
      vertex: { module, entryPoint: 'vs', buffers: [{ arrayStride: 8, attributes: [{ shaderLocation: 0, offset: 0, format: 'float32x2' }] }] },
      fragment: { module, entryPoint: 'fs', targets: [{ format }] },
      primitive: { topology },
    });
    const pipeline = device.createRenderPipeline(descriptor('triangles', 'triangle-list'));
    const points = await device.createRenderPipelineAsync(descriptor('points', 'point-list'));

    const U = GPUBufferUsage;
    const vertices = device.createBuffer({ label: 'triangle.vertices', size: 24, usage: U.VERTEX | U.COPY_DST });
    device.queue.writeBuffer(vertices, 0, new Float32Array([0, 0.8, -0.8, -0.8, 0.8, -0.8]));
    const indices = device.createBuffer({ label: 'triangle.indices', size: 8, usage: U.INDEX | U.COPY_DST });
    device.queue.writeBuffer(indices, 0, new Uint16Array([0, 1, 2, 0]));
    // drawIndirect args (vertexCount, instanceCount, firstVertex, firstInstance) at 0,
    // drawIndexedIndirect args (indexCount, instanceCount, firstIndex, baseVertex, firstInstance) at 16
    const indirect = device.createBuffer({ label: 'triangle.indirect', size: 36, usage: U.INDIRECT | U.COPY_DST });
    device.queue.writeBuffer(indirect, 0, new Uint32Array([3, 1, 0, 0, 3, 1, 0, 0, 0]));
    const uniforms = device.createBuffer({ label: 'frame.uniforms', size: 2 * align, usage: U.UNIFORM | U.COPY_DST });
    const bindGroup = device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: uniforms, size: 16 } }] });

    const drawn = [];
    for (let f = 0; f < frames; f++) {
      await new Promise((resolve) => requestAnimationFrame(resolve));
      const slot = (f % 2) * align;
      device.queue.writeBuffer(uniforms, slot, new Float32Array([f / frames, 0.5, 1 - f / frames, 1]));
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginRenderPass({ colorAttachments: [{
        view, loadOp: 'clear', storeOp: 'store', clearValue: [0, 0, 0, 1] }] });
      pass.setPipeline(pipeline);
      pass.setVertexBuffer(0, vertices);
      pass.setIndexBuffer(indices, 'uint16');
      pass.setBindGroup(0, bindGroup, [slot]);
      pass.draw(3);
      pass.drawIndexed(3);
      pass.setPipeline(points);
      pass.setBindGroup(0, bindGroup, [slot]);
      pass.drawIndirect(indirect, 0);
      pass.drawIndexedIndirect(indirect, 16);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      drawn.push(f);
      performance.mark('frame');
    }
    document.getElementById('result').textContent = JSON.stringify({ frames: drawn.length, errors });
    status.textContent = errors.length ? `failed: ${errors[0]}` : 'done';
  } catch (err) {
    status.textContent = `failed: ${err && err.message || err}`;
  }
})();
