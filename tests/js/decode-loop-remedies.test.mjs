// decode-loop's remedies (workloads/decode-loop/remedies.js) on the real kernels, in node: the
// kernel rewrites and layouts, and the per-node bind groups and shared uniform slots on the
// emulated WebGPU (the browser runs: tests/e2e/test_remedies.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { NodeBindGroups, SharedUniforms, dynamicOffsetLayoutEntries, immediatesKernel, immediatesSupport, passHasImmediates } from '../../workloads/decode-loop/remedies.js';
import { BufferIds } from '../../workloads/decode-loop/buffer-cache.js';
import { BU, newDevice } from './helpers.mjs';

const KERNELS = new URL('../../workloads/kernels/', import.meta.url);
const kernels = readdirSync(KERNELS).filter((f) => f.endsWith('.wgsl')).map((f) => [f, readFileSync(new URL(f, KERNELS), 'utf8')]);

test('every kernel: its uniform block moves to var<immediate>, and gets a dynamic-offset layout', () => {
  assert.ok(kernels.length >= 18);
  for (const [name, code] of kernels) {
    const imm = immediatesKernel(code);
    assert.doesNotMatch(imm, /var<uniform>/, name);
    assert.match(imm, /var<immediate> u: Uniforms;/, name);
    const entries = dynamicOffsetLayoutEntries(code);
    const bindings = [...code.matchAll(/@binding\((\d+)\)/g)].map((m) => Number(m[1]));
    assert.deepEqual(entries.map((e) => e.binding), bindings, name);
    assert.equal(entries.filter((e) => e.buffer.hasDynamicOffset).length, 1, name);
    const last = entries[entries.length - 1];
    assert.deepEqual(last.buffer, { type: 'uniform', hasDynamicOffset: true }, `${name}: the uniform block is the last binding`);
    assert.ok(entries.slice(0, -1).every((e) => e.buffer.type === 'storage' || e.buffer.type === 'read-only-storage'), name);
  }
  assert.throws(() => immediatesKernel('@group(0) @binding(0) var<storage> x: array<f32>;'), /no `var<uniform> u: Uniforms`/);
});

test('immediates support names what is missing', () => {
  assert.match(immediatesSupport({ limits: {} }).reason, /maxImmediateSize is not defined/);
  assert.match(immediatesSupport({ limits: { maxImmediateSize: 0 } }).reason, /maxImmediateSize is 0/);
  assert.match(immediatesSupport({ limits: { maxImmediateSize: 16 } }).reason, /16 < 24 bytes/);
  assert.match(immediatesSupport({ limits: { maxImmediateSize: 64 } }, new Set()).reason, /'immediate_address_space' is not in/);
  assert.deepEqual(immediatesSupport({ limits: { maxImmediateSize: 64 } }), { ok: true, maxImmediateSize: 64 });
});

test('the emulated device\'s passes have setImmediates', async () => {
  const d = await newDevice();
  assert.equal(passHasImmediates(d), true);
  d.destroy();
});

test('one bind group per node, kept while its buffers come back; the shared uniform buffer writes only changes', async () => {
  const d = await newDevice();
  globalThis.GPUBufferUsage ??= { UNIFORM: 64, COPY_DST: 8 };
  const ids = new BufferIds();
  const layout = d.createBindGroupLayout({ entries: [
    { binding: 0, visibility: 4, buffer: { type: 'storage' } },
    { binding: 1, visibility: 4, buffer: { type: 'uniform', hasDynamicOffset: true } }] });
  const shared = new SharedUniforms(d, 3, d.limits.minUniformBufferOffsetAlignment, ids);
  assert.equal(shared.slot, 256);
  assert.equal(shared.buffer.size, 3 * 256);
  const a = d.createBuffer({ size: 64, usage: BU.STORAGE });
  const b = d.createBuffer({ size: 64, usage: BU.STORAGE });
  ids.assign(a);
  ids.assign(b);
  const groups = new NodeBindGroups(d, ids, 3);
  const entries = (buf) => [{ binding: 0, buffer: buf }, { binding: 1, buffer: shared.buffer, size: 16 }];
  const g0 = groups.get(0, layout, entries(a), 'n0');
  assert.equal(groups.get(0, layout, entries(a), 'n0'), g0, 'same buffers: the same bind group');
  groups.get(1, layout, entries(a), 'n1');
  assert.notEqual(groups.get(0, layout, entries(b), 'n0'), g0, 'another buffer: a new one');
  assert.equal(groups.created, 3);
  assert.equal(groups.size, 2);
  const block = new Uint32Array([1, 2, 3, 4]).buffer;
  assert.equal(shared.write(2, block), true);
  assert.equal(shared.write(2, new Uint32Array([1, 2, 3, 4]).buffer), false, 'unchanged: not written');
  assert.equal(shared.write(2, new Uint32Array([1, 2, 3, 5]).buffer), true);
  assert.equal(shared.offset(2), 512);
  d.destroy();
});
