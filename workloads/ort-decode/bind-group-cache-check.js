// In-browser checks of workloads/lib/bind-group-cache.js on a real GPUDevice (run in a page or worker with
// WebGPU). Returns {ok, checks: [{name, ok, detail}]}; never leaves the cache installed.
//
//   import {checkBindGroupCache} from '/workloads/ort-decode/bind-group-cache-check.js';
//   const report = await checkBindGroupCache(adapter);   // adapter: a GPUAdapter not yet used
//
// The collection check needs a way to run the garbage collector: globalThis.gc (Chromium with
// --js-flags=--expose-gc); without it that check reports ok: null (not run).

import {installBindGroupCache} from '../lib/bind-group-cache.js';

export async function checkBindGroupCache(adapter) {
  const device = await adapter.requestDevice();
  const checks = [];
  const check = (name, ok, detail = '') => checks.push({name, ok, detail});
  const U = GPUBufferUsage;
  const layout = device.createBindGroupLayout({
    entries: [{binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: {type: 'storage'}}],
  });
  const buffer = (size = 1024) => device.createBuffer({size, usage: U.STORAGE | U.COPY_DST});
  const group = (buf, offset, size) => device.createBindGroup({
    layout,
    entries: [{binding: 0, resource: offset === undefined ? {buffer: buf} : {buffer: buf, offset, size}}],
  });
  const originalCreate = GPUDevice.prototype.createBindGroup;
  const originalDestroy = GPUBuffer.prototype.destroy;
  const cache = installBindGroupCache({maxEntries: 4});
  try {
    const a = buffer();
    const g1 = group(a);
    const g2 = group(a);
    let s = cache.stats();
    check('same descriptor -> same GPUBindGroup', g1 === g2 && s.hits === 1 && s.misses === 1, JSON.stringify(s));

    const align = device.limits.minStorageBufferOffsetAlignment;
    const g3 = group(a, 0, 256);
    const g4 = group(a, align, 256);
    check('offset and size are part of the key', g3 !== g1 && g4 !== g3 && cache.stats().size === 3);

    const b = buffer();
    group(b);
    const before = cache.stats();
    a.destroy();
    s = cache.stats();
    check('destroy() evicts every entry of that buffer', before.size === 4 && s.size === 1 && s.evictedDestroyed === 3,
          `size ${before.size} -> ${s.size}, ${JSON.stringify(s)}`);
    check('a destroyed buffer gets a fresh bind group', (() => {
      const c = buffer();
      const x = group(c);
      c.destroy();
      const c2 = buffer();
      return group(c2) !== x;
    })());

    const many = Array.from({length: 10}, () => buffer(256));
    const keep = group(many[0]);
    for (let i = 1; i < many.length; i++) {
      group(many[i]);
      group(many[0]); // keep many[0] the most recently used
    }
    s = cache.stats();
    check('LRU bound: size never above maxEntries', s.size <= 4 && s.evictedLru >= 6, JSON.stringify(s));
    check('LRU keeps the recently used entry', group(many[0]) === keep);
    for (const m of many) m.destroy();

    const module = device.createShaderModule({
      code: '@group(0) @binding(0) var<storage, read_write> d: array<u32>;\n' +
            '@compute @workgroup_size(1) fn main() { d[0] = 1u; }',
    });
    const pipeline = device.createComputePipeline({layout: 'auto', compute: {module, entryPoint: 'main'}});
    const l1 = pipeline.getBindGroupLayout(0);
    const l2 = pipeline.getBindGroupLayout(0);
    const e = buffer();
    const ga = device.createBindGroup({layout: l1, entries: [{binding: 0, resource: {buffer: e}}]});
    const gb = device.createBindGroup({layout: l2, entries: [{binding: 0, resource: {buffer: e}}]});
    check("'auto' layouts of one pipeline and index share entries", ga === gb, `same wrapper: ${l1 === l2}`);
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, gb);
    pass.dispatchWorkgroups(1);
    pass.end();
    device.pushErrorScope('validation');
    device.queue.submit([enc.finish()]);
    const err = await device.popErrorScope();
    check('a cached bind group is valid with its pipeline', !err, err?.message ?? '');
    e.destroy();

    if (typeof globalThis.gc === 'function') {
      const collectedBefore = cache.stats().evictedCollected;
      (() => {
        for (let i = 0; i < 3; i++) group(buffer(256)); // buffers unreachable after this scope
      })();
      for (let i = 0; i < 20 && cache.stats().evictedCollected - collectedBefore < 3; i++) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 50));
      }
      s = cache.stats();
      check('a collected buffer (never destroyed) evicts its entries', s.evictedCollected - collectedBefore >= 3,
            `evictedCollected ${collectedBefore} -> ${s.evictedCollected}`);
    } else {
      check('a collected buffer (never destroyed) evicts its entries', null, 'globalThis.gc not exposed: not run');
    }
  } catch (e) {
    check('no exception', false, String(e?.stack ?? e));
  } finally {
    cache.uninstall();
    device.destroy();
  }
  check('uninstall restores the WebGPU methods',
        GPUDevice.prototype.createBindGroup === originalCreate && GPUBuffer.prototype.destroy === originalDestroy);
  return {ok: checks.every((c) => c.ok !== false), checks};
}
