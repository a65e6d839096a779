// gc-retention: which JS allocation pattern changes how many per-dispatch GPUBindGroup wrappers
// an engine's garbage collector leaves uncollected (workloads/README.md contract).
//
// Why: in WebKit a bind group's native memory (one MTLBuffer per shader stage with bindings,
// Source/WebGPU/WebGPU/BindGroup.mm) is freed only when its JS wrapper is collected, and the
// wrapper reports no extra cost to JavaScriptCore. The onnxruntime field report
// (microsoft/onnxruntime #33750, /work/shared/references.md) saw ~150,000 uncollected bind
// groups when iOS killed the page at 2,048 MB, "a worker running ORT allocates little JS memory,
// so GC rarely runs", and a forced GC every 16 tokens (~32 MB of throwaway ArrayBuffers) left
// 250–7,000. Our WebKitGTK trial saw plain small JS objects collected promptly. Whether the
// emulated WebGPU (web/emulation/) in WebKitGTK reproduces Safari's retention is the question
// this workload lets the harness answer: every variant makes the SAME WebGPU calls (ORT's
// dispatch path, references.md "onnxruntime WebGPU EP internals"), and differs only in the JS
// allocation pattern around them.
//
// Per token (one probe step): dispatchesPerToken dispatches of workloads/kernels/add.wgsl on
// `elements` floats, each with a NEW bind group {input, input, output, uniform}; the uniform
// buffer comes from a free list by exact size (ORT's `simple` uniform cache), is written per
// dispatch and goes back to the free list after the submit; a compute pass per command buffer,
// dispatchesPerSubmit dispatches per command buffer (ORT's max_num_pending_dispatches = 16),
// then end pass, finish, submit; the last command buffer copies the token's output into a
// MAP_READ buffer and the token ends with one mapAsync.
//
// The kernel chain: dispatch k reads s[k % S] and the fixed `delta` buffer and writes
// s[(k+1) % S], so after n dispatches in all the output is x0 + n·delta, exact in f32 while
// x0 + n·4 < 2^24. On real WebGPU (verify=auto) every token's readback is checked against it:
// that proves the dispatches ran. The emulation runs no shaders, so it is not checked there.

import { parseOptions } from './options.js';
import { fnv1a32Hex } from '../lib/hash.js';

const UNIFORM_BYTES = 16; // {n: u32} rounded to 16 bytes, as ORT rounds uniform blocks
const CHURN_OBJECT_BYTES = 64; // estimate of one churn object ({i, x, s, next}) in JSC/V8
const FORCE_GC_CHUNK = 1 << 20; // the force-gc variant allocates 1 MiB ArrayBuffers
const WASM_PAGE = 65536;

function isEmulated(adapter) {
  const info = adapter.info ?? {};
  return info.architecture === 'emulated' || /emulated/i.test(String(info.description ?? ''));
}

// Module-level holders: what a pattern keeps alive between calls. Dropping the reference is
// what makes the previous contents garbage.
let churnHead = null; // js-churn: linked list of this token's garbage, dropped at the next token
let forceGcHold = null; // force-gc: the throwaway ArrayBuffers, dropped right after allocation

/** force-gc: the field report's workaround, ~`mb` MiB of throwaway ArrayBuffers. Returns bytes. */
function forceGcAllocation(mb) {
  forceGcHold = [];
  for (let i = 0; i < mb; i++) {
    const ab = new ArrayBuffer(FORCE_GC_CHUNK);
    new Uint8Array(ab)[0] = i & 0xff;
    forceGcHold.push(ab);
  }
  const bytes = forceGcHold.length * FORCE_GC_CHUNK;
  forceGcHold = null;
  return bytes;
}

/** js-churn: `count` small objects chained onto this token's list (escape: no allocation sinking). */
function churn(count, base) {
  let head = churnHead;
  for (let i = 0; i < count; i++) head = { i: base + i, x: (base + i) * 0.5, s: null, next: head };
  churnHead = head;
}

export async function run(ctx) {
  const o = parseOptions(ctx.params ?? {});
  const emulated = isEmulated(ctx.adapter);
  const verify = o.verify === 'on' || (o.verify === 'auto' && !emulated);
  const device = await ctx.adapter.requestDevice({ label: 'gc-retention' });
  const gpuErrors = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push(String(e.error?.message ?? e.error)));
  const queue = device.queue;
  const res = await fetch(ctx.kernelUrl('add.wgsl'));
  if (!res.ok) throw new Error(`fetch add.wgsl: HTTP ${res.status}`);
  const code = await res.text();

  const n = o.elements;
  const bytes = n * 4;
  const S = o.storageBuffers;
  const D = o.dispatchesPerToken;
  const K = o.dispatchesPerSubmit;
  const variant = o.variant;
  // wasm-heap-force-gc combines the two: ORT (which has a wasm heap) with the field report's
  // workaround, the configuration the report's 250–7,000 figure comes from.
  const usesWasmHeap = variant === 'wasm-heap' || variant === 'wasm-heap-force-gc';
  const forcesGc = variant === 'force-gc' || variant === 'wasm-heap-force-gc';
  const created = [];
  let wasmHeap = null;
  try {
    // ---- setup (before token 0; not inside any step) ------------------------------------
    const module = device.createShaderModule({ label: 'add', code });
    const layout = device.createBindGroupLayout({
      label: 'add',
      entries: [
        { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
        { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
        { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
        { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
      ],
    });
    const pipeline = device.createComputePipeline({
      label: 'add',
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: 'main' },
    });
    const x0 = new Float32Array(n);
    const delta = new Float32Array(n);
    for (let i = 0; i < n; i++) { x0[i] = i; delta[i] = (i % 4) + 1; }
    const storage = [];
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    for (let j = 0; j < S; j++) {
      const b = device.createBuffer({ label: `s${j}`, size: bytes, usage });
      created.push(b);
      storage.push(b);
    }
    queue.writeBuffer(storage[0], 0, x0);
    const deltaBuf = device.createBuffer({ label: 'delta', size: bytes, usage });
    created.push(deltaBuf);
    queue.writeBuffer(deltaBuf, 0, delta);
    const readback = device.createBuffer({ label: 'readback', size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    created.push(readback);
    const workgroups = Math.ceil(n / 64);

    // ORT's `simple` uniform cache: a free list by exact size; buffers in use go back after the
    // submit that used them (references.md, "Uniforms").
    const uniformFree = [];
    const uniformInUse = [];
    const uniformUsage = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    const acquireUniform = () => {
      let u = uniformFree.pop();
      if (!u) {
        u = device.createBuffer({ label: 'uniform', size: UNIFORM_BYTES, usage: uniformUsage });
        created.push(u);
      }
      uniformInUse.push(u);
      return u;
    };

    // minimal / encoder-refs / wasm-heap / js-churn / force-gc: one descriptor, mutated.
    const entries = [
      { binding: 0, resource: { buffer: storage[0], offset: 0, size: bytes } },
      { binding: 1, resource: { buffer: deltaBuf, offset: 0, size: bytes } },
      { binding: 2, resource: { buffer: storage[1], offset: 0, size: bytes } },
      { binding: 3, resource: { buffer: null, offset: 0, size: UNIFORM_BYTES } },
    ];
    const reusedDesc = { layout, entries };
    const uniformWords = new Uint32Array(UNIFORM_BYTES / 4);
    uniformWords[0] = n;
    const submitList = [null];

    // wasm-heap: ORT's wasm heap (a WebAssembly.Memory), every 4 KiB page touched; uniforms
    // staged in it and written from a view of it, as Emscripten's WebGPU glue passes
    // (HEAPU8, ptr, size) to writeBuffer (wasm_uniforms=0: from minimal's Uint32Array instead,
    // to tell the heap's size from the write path).
    let heapU8 = null;
    let heapU32 = null;
    const heapUniformPtr = 1024;
    if (usesWasmHeap) {
      const pages = o.wasmHeapMiB * (1 << 20) / WASM_PAGE;
      wasmHeap = new WebAssembly.Memory({ initial: pages, maximum: pages });
      heapU8 = new Uint8Array(wasmHeap.buffer);
      for (let i = 0; i < heapU8.length; i += 4096) heapU8[i] = 1;
      heapU32 = new Uint32Array(wasmHeap.buffer);
    }
    // encoder-refs: a ring of the last keepEncoders (encoder, pass, command buffer) triples.
    const ring = variant === 'encoder-refs' ? new Array(o.keepEncoders * 3).fill(null) : null;
    let ringAt = 0;
    let ringFilled = 0;

    const churnPerToken = variant === 'js-churn' ? Math.round(o.churnKiB * 1024 / CHURN_OBJECT_BYTES) : 0;
    const churnPerDispatch = Math.floor(churnPerToken / D);
    const churnRemainder = churnPerToken - churnPerDispatch * D;

    const readBytes = new Uint8Array(bytes);
    let dispatchesSoFar = 0;
    let verifiedTokens = 0;
    const wallMs = [];
    ctx.log(`gc-retention ${variant}: ${D} dispatches/token, ${K} per command buffer, `
      + `${emulated ? 'emulated' : 'real'} WebGPU, verify ${verify ? 'on' : 'off'}`);

    // ---- tokens ---------------------------------------------------------------------------
    for (let t = 0; t < o.tokens; t++) {
      ctx.probe.beginStep(t);
      const t0 = performance.now();
      let forcedBytes = 0;
      if (forcesGc && t > 0 && t % o.forceGcEvery === 0 && o.forceGcMB > 0) {
        forcedBytes = forceGcAllocation(o.forceGcMB);
      }
      if (variant === 'js-churn') { churnHead = null; churn(churnRemainder, 0); }

      let encoder = null;
      let pass = null;
      let pending = 0;
      let submits = 0;
      for (let d = 0; d < D; d++) {
        const k = dispatchesSoFar + d;
        const src = storage[k % S];
        const dst = storage[(k + 1) % S];
        if (!encoder) {
          if (variant === 'descriptors') {
            encoder = device.createCommandEncoder({ label: '' });
            pass = encoder.beginComputePass({ label: '' });
          } else {
            encoder = device.createCommandEncoder();
            pass = encoder.beginComputePass();
          }
        }
        const u = acquireUniform();
        let bindGroup;
        if (variant === 'descriptors') {
          // what ORT's JS glue builds per dispatch: a fresh uniform block and descriptor tree
          const ub = new ArrayBuffer(UNIFORM_BYTES);
          new DataView(ub).setUint32(0, n, true);
          queue.writeBuffer(u, 0, ub);
          const e = [];
          e.push({ binding: 0, resource: { buffer: src, offset: 0, size: bytes } });
          e.push({ binding: 1, resource: { buffer: deltaBuf, offset: 0, size: bytes } });
          e.push({ binding: 2, resource: { buffer: dst, offset: 0, size: bytes } });
          e.push({ binding: 3, resource: { buffer: u, offset: 0, size: UNIFORM_BYTES } });
          bindGroup = device.createBindGroup({ label: '', layout, entries: e });
        } else {
          if (heapU32 && o.wasmUniforms) {
            heapU32[heapUniformPtr >> 2] = n;
            queue.writeBuffer(u, 0, heapU8, heapUniformPtr, UNIFORM_BYTES);
          } else {
            queue.writeBuffer(u, 0, uniformWords);
          }
          entries[0].resource.buffer = src;
          entries[2].resource.buffer = dst;
          entries[3].resource.buffer = u;
          bindGroup = device.createBindGroup(reusedDesc);
        }
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup);
        pass.dispatchWorkgroups(workgroups);
        if (churnPerDispatch) churn(churnPerDispatch, k);
        pending++;
        const last = d === D - 1;
        if (pending === K || last) {
          pass.end();
          if (last) encoder.copyBufferToBuffer(dst, 0, readback, 0, bytes);
          const cb = encoder.finish();
          if (variant === 'descriptors') queue.submit([cb]);
          else { submitList[0] = cb; queue.submit(submitList); submitList[0] = null; }
          submits++;
          while (uniformInUse.length) uniformFree.push(uniformInUse.pop());
          if (ring && o.keepEncoders > 0) {
            ring[ringAt * 3] = encoder;
            ring[ringAt * 3 + 1] = pass;
            ring[ringAt * 3 + 2] = cb;
            ringAt = (ringAt + 1) % o.keepEncoders;
            ringFilled = Math.min(ringFilled + 1, o.keepEncoders);
          }
          encoder = null;
          pass = null;
          pending = 0;
        }
      }
      dispatchesSoFar += D;

      await readback.mapAsync(GPUMapMode.READ);
      readBytes.set(new Uint8Array(readback.getMappedRange()));
      readback.unmap();
      const hash = fnv1a32Hex(readBytes);
      if (gpuErrors.length) throw new Error(`token ${t}: WebGPU error: ${gpuErrors[0]}`);
      let verified = 0;
      if (verify && dispatchesSoFar * 4 + n < 2 ** 24) {
        const got = new Float32Array(readBytes.buffer);
        for (let i = 0; i < n; i++) {
          const want = x0[i] + dispatchesSoFar * delta[i];
          if (got[i] !== want) {
            throw new Error(`token ${t}: readback[${i}] = ${got[i]}, expected ${want} after ${dispatchesSoFar} dispatches`);
          }
        }
        verified = 1;
        verifiedTokens++;
      }
      wallMs.push(performance.now() - t0);
      ctx.probe.endStep(t, {
        token: t,
        logitsHash: hash,
        extra: {
          pattern: variant,
          submits_in_token: submits,
          churn_objects: variant === 'js-churn' ? churnPerToken : 0,
          forced_gc_bytes: forcedBytes,
          retained_command_buffers: ring ? ringFilled : 0,
          wasm_heap_bytes: wasmHeap ? wasmHeap.buffer.byteLength : 0,
          wasm_uniforms: heapU32 && o.wasmUniforms ? 1 : 0,
          verified,
        },
      });
      await ctx.probe.checkpoint(t); // --gc-checkpoints: the harness's forced collection, between tokens
    }
    return {
      workload: 'gc-retention',
      variant,
      webgpu: emulated ? 'emulated' : 'real',
      tokens: o.tokens,
      dispatchesPerToken: D,
      dispatchesPerSubmit: K,
      uniformBuffers: uniformFree.length + uniformInUse.length,
      verifiedTokens,
      wallMsPerToken: wallMs,
      parameters: {
        keep_encoders: o.keepEncoders, wasm_heap_mib: o.wasmHeapMiB, wasm_uniforms: o.wasmUniforms, churn_kb: o.churnKiB,
        force_gc_every: o.forceGcEvery, force_gc_mb: o.forceGcMB,
      },
    };
  } finally {
    churnHead = null;
    for (const b of created) b.destroy();
    device.destroy();
    wasmHeap = null;
  }
}
