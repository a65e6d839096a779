// conformance.js: one WebGPU call sequence the harness can run against a real WebGPU
// Over 400 lines on purpose: one linear list of checks, each a few lines, read top to bottom.
// (navigator.gpu in Chromium) and against the emulation (webgpu-emulated.js), to check
// that both accept the same valid sequences and reject the same invalid ones.
//
// export async function runConformance(gpu, options = {}) -> [{name, ok, detail}]
//   gpu: a GPU object (navigator.gpu or createEmulatedGPU()).
//   options.tokens (default 3), options.dispatchesPerToken (default 32)
//
// The checks only read back bytes that no shader writes (writeBuffer/copy/clear
// results), because the emulation runs no shaders. Expected behaviour is the WebGPU
// spec's (gpuweb/gpuweb spec/index.bs): #buffer-mapping, #bindings, #command-encoding,
// #gpuqueue, #error-scopes; the decode loop follows the onnxruntime WebGPU EP pattern in
// /work/shared/references.md (one new bind group per dispatch; inputs, output, uniform;
// 16 dispatches per command buffer; writeBuffer of uniforms; copy to a MAP_READ buffer).

const BU = { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128, INDIRECT: 256 };
const MAP_READ_MODE = 1;

const KERNEL = `
// y[i] = a[i] * b[i] + uniforms.bias, for i < uniforms.n. Shapes: a, b, y: n f32; uniforms 16 B.
struct Uniforms { n: u32, bias: f32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> uniforms: Uniforms;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < uniforms.n) { y[gid.x] = a[gid.x] * b[gid.x] + uniforms.bias; }
}
`;

const KERNEL_DYNAMIC = `
// out[i] = params.scale for i < 4. Shapes: out: 4 f32 (read_write); params: 16 B uniform.
struct Params { scale: f32, p0: f32, p1: f32, p2: f32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) { out[i] = params.scale; }
`;

function isValidationError(e) {
  return !!e && typeof e.message === 'string' && !!e.constructor && e.constructor.name === 'GPUValidationError';
}

function describe(e) {
  if (e === null) return 'null';
  if (e === undefined) return 'undefined';
  return `${e.constructor?.name ?? typeof e}: ${e.message ?? String(e)}`.slice(0, 300);
}

async function expectValidationError(device, fn) {
  device.pushErrorScope('validation');
  let thrown = null;
  try { await fn(); } catch (e) { thrown = e; }
  const err = await device.popErrorScope();
  if (thrown) return { ok: false, detail: `threw ${describe(thrown)}` };
  return { ok: isValidationError(err), detail: describe(err) };
}

async function expectNoError(device, fn) {
  device.pushErrorScope('validation');
  let value;
  let thrown = null;
  try { value = await fn(); } catch (e) { thrown = e; }
  const err = await device.popErrorScope();
  if (thrown) return { ok: false, detail: `threw ${describe(thrown)}` };
  return { ok: err === null && (value === undefined || value.ok !== false), detail: err ? describe(err) : (value?.detail ?? 'no error') };
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms); }),
  ]);
}

async function readBack(device, src, size, offset = 0) {
  const rb = device.createBuffer({ size, usage: BU.MAP_READ | BU.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, offset, rb, 0, size);
  device.queue.submit([enc.finish()]);
  await rb.mapAsync(MAP_READ_MODE);
  const copy = new Uint8Array(rb.getMappedRange()).slice();
  rb.unmap();
  rb.destroy();
  return copy;
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Run every check; never throws (a check that throws is recorded as not ok). */
export async function runConformance(gpu, options = {}) {
  const tokens = options.tokens ?? 3;
  const dispatchesPerToken = options.dispatchesPerToken ?? 32;
  const results = [];
  const check = async (name, fn) => {
    try {
      const r = await withTimeout(Promise.resolve().then(fn), 10000, name);
      results.push({ name, ok: !!r.ok, detail: r.detail ?? '' });
    } catch (e) {
      results.push({ name, ok: false, detail: `threw ${describe(e)}` });
    }
  };

  let adapter = null;
  let device = null;
  await check('adapter', async () => {
    adapter = await gpu.requestAdapter();
    if (!adapter) return { ok: false, detail: 'requestAdapter() returned null' };
    const ok = adapter.limits.maxBindGroups >= 4 && typeof adapter.features.has === 'function' && typeof adapter.info === 'object';
    return { ok, detail: `vendor=${adapter.info?.vendor} maxBindGroups=${adapter.limits.maxBindGroups}` };
  });
  if (!adapter) return results;
  await check('device', async () => {
    device = await adapter.requestDevice();
    const ok = !!device.queue && device.lost instanceof Promise && device.limits.maxStorageBufferBindingSize >= 134217728;
    return { ok, detail: `maxStorageBufferBindingSize=${device.limits.maxStorageBufferBindingSize}` };
  });
  if (!device) return results;
  device.addEventListener('uncapturederror', (e) => { e.preventDefault?.(); });

  const module = device.createShaderModule({ code: KERNEL });
  const n = 256;
  const bytes = n * 4;
  const storage = BU.STORAGE | BU.COPY_DST | BU.COPY_SRC;
  let pipeline = null;

  await check('decode loop: auto layout, bind group per dispatch, 16 per pass, readback', () => expectNoError(device, async () => {
    const info = await module.getCompilationInfo();
    if (info.messages.some((m) => m.type === 'error')) return { ok: false, detail: 'shader has compile errors' };
    pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const a = device.createBuffer({ size: bytes, usage: storage });
    const b = device.createBuffer({ size: bytes, usage: storage });
    const y = device.createBuffer({ size: bytes, usage: storage });
    const readback = device.createBuffer({ size: bytes, usage: BU.MAP_READ | BU.COPY_DST });
    const uniformPool = [];
    let lastDetail = '';
    for (let t = 0; t < tokens; t++) {
      const aData = new Float32Array(n).map((_, i) => t * 1000 + i);
      device.queue.writeBuffer(a, 0, aData);
      device.queue.writeBuffer(b, 0, new Float32Array(n).fill(2));
      let done = 0;
      while (done < dispatchesPerToken) {
        const enc = device.createCommandEncoder();
        const pass = enc.beginComputePass();
        const inThisPass = Math.min(16, dispatchesPerToken - done);
        for (let i = 0; i < inThisPass; i++) {
          const u = uniformPool.pop() ?? device.createBuffer({ size: 16, usage: BU.UNIFORM | BU.COPY_DST });
          device.queue.writeBuffer(u, 0, new Uint32Array([n, 0, 0, 0]));
          const bg = device.createBindGroup({
            layout: pipeline.getBindGroupLayout(0),
            entries: [
              { binding: 0, resource: { buffer: a, offset: 0, size: bytes } },
              { binding: 1, resource: { buffer: b, offset: 0, size: bytes } },
              { binding: 2, resource: { buffer: y, offset: 0, size: bytes } },
              { binding: 3, resource: { buffer: u, offset: 0, size: 16 } },
            ],
          });
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, bg);
          pass.dispatchWorkgroups(Math.ceil(n / 64));
          uniformPool.unshift(u);
        }
        pass.end();
        if (done + inThisPass >= dispatchesPerToken) enc.copyBufferToBuffer(a, 0, readback, 0, bytes);
        device.queue.submit([enc.finish()]);
        done += inThisPass;
      }
      await readback.mapAsync(MAP_READ_MODE);
      const got = new Float32Array(readback.getMappedRange().slice(0));
      readback.unmap();
      if (!sameBytes(new Uint8Array(got.buffer), new Uint8Array(aData.buffer))) {
        return { ok: false, detail: `token ${t}: read back ${got[0]},${got[1]} expected ${aData[0]},${aData[1]}` };
      }
      lastDetail = `token ${t}: read back a[0..2]=${got[0]},${got[1]},${got[2]}`;
    }
    await device.queue.onSubmittedWorkDone();
    return { ok: true, detail: `${tokens} tokens x ${dispatchesPerToken} dispatches; ${lastDetail}` };
  }));

  await check('writeBuffer: TypedArray dataOffset/size count elements', () => expectNoError(device, async () => {
    const buf = device.createBuffer({ size: 32, usage: BU.COPY_DST | BU.COPY_SRC });
    device.queue.writeBuffer(buf, 8, new Uint32Array([10, 11, 12, 13, 14, 15]), 2, 3);
    const got = new Uint32Array((await readBack(device, buf, 32)).buffer);
    const want = [0, 0, 12, 13, 14, 0, 0, 0];
    return { ok: want.every((v, i) => got[i] === v), detail: `[${[...got]}]` };
  }));

  await check('mappedAtCreation + copyBufferToBuffer + clearBuffer', () => expectNoError(device, async () => {
    const src = device.createBuffer({ size: 64, usage: BU.COPY_SRC | BU.STORAGE, mappedAtCreation: true });
    new Uint32Array(src.getMappedRange()).set(Array.from({ length: 16 }, (_, i) => 100 + i));
    src.unmap();
    const dst = device.createBuffer({ size: 64, usage: BU.COPY_SRC | BU.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, dst, 0, 64);
    enc.clearBuffer(dst, 16, 16);
    device.queue.submit([enc.finish()]);
    const got = new Uint32Array((await readBack(device, dst, 64)).buffer);
    const want = Array.from({ length: 16 }, (_, i) => (i >= 4 && i < 8 ? 0 : 100 + i));
    return { ok: want.every((v, i) => got[i] === v) && src.mapState === 'unmapped', detail: `[${[...got].slice(0, 8)}...]` };
  }));

  const dynModule = device.createShaderModule({ code: KERNEL_DYNAMIC });
  let dyn = null;
  await check('explicit layout with a dynamic uniform offset', () => expectNoError(device, async () => {
    const bgl = device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: 4, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: 16 } },
        { binding: 1, visibility: 4, buffer: { type: 'storage' } },
      ],
    });
    const layout = device.createPipelineLayout({ bindGroupLayouts: [bgl] });
    const pipe = await device.createComputePipelineAsync({ layout, compute: { module: dynModule, entryPoint: 'main' } });
    const params = device.createBuffer({ size: 512, usage: BU.UNIFORM | BU.COPY_DST });
    const out = device.createBuffer({ size: 16, usage: BU.STORAGE | BU.COPY_SRC });
    const bg = device.createBindGroup({
      layout: bgl,
      entries: [{ binding: 0, resource: { buffer: params, size: 16 } }, { binding: 1, resource: { buffer: out } }],
    });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipe);
    pass.setBindGroup(0, bg, [256]);
    pass.dispatchWorkgroups(1);
    pass.setBindGroup(0, bg, new Uint32Array([0, 256, 0]), 1, 1);
    pass.dispatchWorkgroups(1);
    pass.end();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    dyn = { pipe, bg };
    return { ok: true, detail: 'submitted' };
  }));

  // ---- invalid usage: every one must produce a GPUValidationError (or the named exception)
  const goodBuffers = () => ({
    a: device.createBuffer({ size: bytes, usage: storage }),
    b: device.createBuffer({ size: bytes, usage: storage }),
    y: device.createBuffer({ size: bytes, usage: storage }),
    u: device.createBuffer({ size: 256, usage: BU.UNIFORM | BU.COPY_DST }),
  });
  const entriesFor = ({ a, b, y, u }, uSize = 16) => [
    { binding: 0, resource: { buffer: a } }, { binding: 1, resource: { buffer: b } },
    { binding: 2, resource: { buffer: y } }, { binding: 3, resource: { buffer: u, size: uSize } },
  ];
  pipeline = pipeline ?? device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });

  await check('invalid: createBindGroup entry count != layout entry count', () => expectValidationError(device, () => {
    const bufs = goodBuffers();
    device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entriesFor(bufs).slice(0, 3) });
  }));

  await check('invalid: createBindGroup binding not in the layout', () => expectValidationError(device, () => {
    const bufs = goodBuffers();
    const entries = entriesFor(bufs);
    entries[3] = { binding: 7, resource: { buffer: bufs.u, size: 16 } };
    device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
  }));

  await check('invalid: storage binding of a buffer without STORAGE usage', () => expectValidationError(device, () => {
    const bufs = goodBuffers();
    bufs.a = device.createBuffer({ size: bytes, usage: BU.COPY_DST | BU.UNIFORM });
    device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entriesFor(bufs) });
  }));

  await check('invalid: uniform binding smaller than the shader struct (minBindingSize)', () => expectValidationError(device, () => {
    device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entriesFor(goodBuffers(), 8) });
  }));

  await check('invalid: binding range past the end of the buffer', () => expectValidationError(device, () => {
    const bufs = goodBuffers();
    const entries = entriesFor(bufs);
    entries[0] = { binding: 0, resource: { buffer: bufs.a, offset: 256, size: bytes } };
    device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
  }));

  await check('invalid: mapAsync(READ) without MAP_READ rejects with OperationError', async () => {
    const buf = device.createBuffer({ size: 16, usage: BU.COPY_DST | BU.STORAGE });
    device.pushErrorScope('validation');
    let rejection = null;
    try { await buf.mapAsync(MAP_READ_MODE); } catch (e) { rejection = e; }
    const err = await device.popErrorScope();
    const ok = !!rejection && rejection.name === 'OperationError' && isValidationError(err) && buf.mapState === 'unmapped';
    return { ok, detail: `rejection=${describe(rejection)}; scope=${describe(err)}` };
  });

  await check('invalid: getMappedRange on an unmapped buffer throws OperationError', () => {
    const buf = device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.COPY_DST });
    try {
      buf.getMappedRange();
      return { ok: false, detail: 'did not throw' };
    } catch (e) {
      return { ok: e.name === 'OperationError', detail: describe(e) };
    }
  });

  await check('invalid: mapAsync while a map is pending rejects with OperationError', async () => {
    const buf = device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.COPY_DST });
    device.pushErrorScope('validation');
    const first = buf.mapAsync(MAP_READ_MODE);
    let rejection = null;
    try { await buf.mapAsync(MAP_READ_MODE); } catch (e) { rejection = e; }
    await first;
    const err = await device.popErrorScope();
    buf.unmap();
    // The spec's early-reject steps also generate a validation error; Chromium 156 does not,
    // so only the rejection is required here (the scope's content is reported).
    return { ok: rejection?.name === 'OperationError', detail: `${describe(rejection)}; scope=${describe(err)}` };
  });

  await check('unmap() while mapAsync is pending rejects it with AbortError', async () => {
    const buf = device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.COPY_DST });
    const p = buf.mapAsync(MAP_READ_MODE);
    buf.unmap();
    let rejection = null;
    try { await p; } catch (e) { rejection = e; }
    return { ok: rejection?.name === 'AbortError' && buf.mapState === 'unmapped', detail: describe(rejection) };
  });

  await check('invalid: submit uses a destroyed buffer', () => expectValidationError(device, () => {
    const bufs = goodBuffers();
    const bg = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entriesFor(bufs) });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(1);
    pass.end();
    const cb = enc.finish();
    bufs.y.destroy();
    device.queue.submit([cb]);
  }));

  await check('invalid: submit uses a destroyed copy source', () => expectValidationError(device, () => {
    const src = device.createBuffer({ size: 16, usage: BU.COPY_SRC });
    const dst = device.createBuffer({ size: 16, usage: BU.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, dst, 0, 16);
    const cb = enc.finish();
    src.destroy();
    device.queue.submit([cb]);
  }));

  await check('invalid: the same command buffer submitted twice', async () => {
    const enc = device.createCommandEncoder();
    const cb = enc.finish();
    const first = await expectNoError(device, () => device.queue.submit([cb]));
    const second = await expectValidationError(device, () => device.queue.submit([cb]));
    return { ok: first.ok && second.ok, detail: `first=${first.detail}; second=${second.detail}` };
  });

  await check('invalid: finish() while a compute pass is not ended', () => expectValidationError(device, () => {
    const enc = device.createCommandEncoder();
    enc.beginComputePass();
    enc.finish();
  }));

  await check('invalid: dispatch without a bind group (error at finish)', () => expectValidationError(device, () => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.dispatchWorkgroups(1);
    pass.end();
    enc.finish();
  }));

  await check("invalid: bind group from another pipeline's 'auto' layout", () => expectValidationError(device, () => {
    const other = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const bg = device.createBindGroup({ layout: other.getBindGroupLayout(0), entries: entriesFor(goodBuffers()) });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(1);
    pass.end();
    enc.finish();
  }));

  await check('invalid: wrong number of dynamic offsets', () => {
    if (!dyn) return { ok: false, detail: 'needs the dynamic-offset check to pass first' };
    return expectValidationError(device, () => {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(dyn.pipe);
      pass.setBindGroup(0, dyn.bg, []);
      pass.dispatchWorkgroups(1);
      pass.end();
      enc.finish();
    });
  });

  await check('invalid: createBuffer MAP_READ | STORAGE', () => expectValidationError(device, () => {
    device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.STORAGE });
  }));

  await check('invalid: writeBuffer to a buffer without COPY_DST', () => expectValidationError(device, () => {
    const buf = device.createBuffer({ size: 16, usage: BU.STORAGE });
    device.queue.writeBuffer(buf, 0, new Uint32Array(4));
  }));

  await check('invalid: createComputePipelineAsync with a missing entry point rejects with GPUPipelineError', async () => {
    device.pushErrorScope('validation');
    let rejection = null;
    try { await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'nope' } }); } catch (e) { rejection = e; }
    const err = await device.popErrorScope();
    return { ok: rejection?.name === 'GPUPipelineError' && rejection?.reason === 'validation' && err === null, detail: `${describe(rejection)}; scope=${describe(err)}` };
  });

  await check('popErrorScope on an empty stack rejects with OperationError', async () => {
    try {
      await device.popErrorScope();
      return { ok: false, detail: 'resolved' };
    } catch (e) {
      return { ok: e.name === 'OperationError', detail: describe(e) };
    }
  });

  await check('an error outside any scope fires uncapturederror', async () => {
    const got = new Promise((resolve) => {
      const listener = (e) => { device.removeEventListener('uncapturederror', listener); resolve(e); };
      device.addEventListener('uncapturederror', listener);
    });
    device.createBuffer({ size: 16, usage: BU.MAP_WRITE | BU.STORAGE });
    // Chromium delivers the event once the device is polled again: keep it busy.
    let event = null;
    got.then((e) => { event = e; });
    for (let i = 0; i < 50 && !event; i++) {
      await device.queue.onSubmittedWorkDone();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!event) return { ok: false, detail: 'no uncapturederror event within 5 s' };
    return { ok: isValidationError(event.error), detail: describe(event.error) };
  });

  await check('device.destroy() resolves lost with reason "destroyed"', async () => {
    const d = await (await gpu.requestAdapter()).requestDevice();
    const buf = d.createBuffer({ size: 16, usage: BU.MAP_READ | BU.COPY_DST });
    const p = buf.mapAsync(MAP_READ_MODE);
    d.destroy();
    let rejection = null;
    try { await p; } catch (e) { rejection = e; }
    const info = await withTimeout(d.lost, 5000, 'lost');
    return { ok: info.reason === 'destroyed' && rejection?.name === 'AbortError', detail: `reason=${info.reason}; map=${describe(rejection)}` };
  });

  return results;
}
