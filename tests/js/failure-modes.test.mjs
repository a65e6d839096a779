// Failure modes of the emulated WebGPU (web/emulation/README.md, "Failure modes"), each a model
// labelled with its source: createBuffer refused with an out-of-memory error past the memory
// budget while the device lives on; a binding past maxStorageBufferBindingSize rejected; the
// consequence counted (command buffers refused, dispatches dropped); modeled setImmediates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emulationStats, modelLabels } from '../../web/emulation/webgpu-emulated.js';
import { BU, KERNEL, newDevice, tick } from './helpers.mjs';

const MiB = 1 << 20;

test('out-of-memory at the budget: an invalid buffer and a GPUOutOfMemoryError, the device lives on', async () => {
  const d = await newDevice({ memoryBudgetBytes: 4 * MiB, atMemoryBudget: 'out-of-memory' });
  const lost = [];
  d.lost.then((info) => lost.push(info.reason));
  const uncaptured = [];
  d.addEventListener('uncapturederror', (e) => uncaptured.push(e.error));
  const a = d.createBuffer({ size: 3 * MiB, usage: BU.STORAGE });
  d.pushErrorScope('out-of-memory');
  const b = d.createBuffer({ label: 'too-much', size: 2 * MiB, usage: BU.STORAGE });
  const scoped = await d.popErrorScope();
  assert.equal(scoped?.constructor.name, 'GPUOutOfMemoryError');
  assert.match(scoped.message, /out of memory: 2097152 bytes for 'too-much'/);
  d.createBuffer({ size: 2 * MiB, usage: BU.STORAGE }); // no scope: uncapturederror
  await tick(); await tick();
  assert.equal(uncaptured.length, 1);
  assert.equal(uncaptured[0].constructor.name, 'GPUOutOfMemoryError');
  const s = emulationStats(d);
  assert.equal(s.outOfMemoryErrors, 2);
  assert.equal(s.buffersLiveBytes, 3 * MiB, 'refused buffers are not charged');
  assert.equal(s.memoryBudget.atBudget, 'out-of-memory');
  assert.ok(s.model.failureModels.some((m) => m.startsWith('out-of-memory-at-budget (a model)')));
  // what was refused is invalid: binding it fails validation; what fits still works
  d.pushErrorScope('validation');
  const module = d.createShaderModule({ code: KERNEL });
  const pipeline = d.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const u = d.createBuffer({ size: 16, usage: BU.UNIFORM });
  d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: a } }, { binding: 1, resource: { buffer: b } }, { binding: 2, resource: { buffer: u } }] });
  assert.match((await d.popErrorScope())?.message ?? '', /buffer is invalid/);
  a.destroy();
  assert.equal(d.createBuffer({ size: 2 * MiB, usage: BU.STORAGE }).size, 2 * MiB);
  assert.equal(emulationStats(d).outOfMemoryErrors, 2, 'room again after destroy()');
  await tick(); await tick();
  assert.deepEqual(lost, [], 'the device is not lost');
  d.destroy();
});

test('the consequence: a dispatch with an invalid bind group drops its command buffer, counted', async () => {
  const d = await newDevice({ memoryBudgetBytes: 1 * MiB, atMemoryBudget: 'out-of-memory' });
  const module = d.createShaderModule({ code: KERNEL });
  const pipeline = d.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const x = d.createBuffer({ size: 256, usage: BU.STORAGE });
  const y = d.createBuffer({ size: 2 * MiB, usage: BU.STORAGE }); // refused
  const u = d.createBuffer({ size: 16, usage: BU.UNIFORM });
  const good = d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: x } }, { binding: 1, resource: { buffer: x } }, { binding: 2, resource: { buffer: u } }] });
  const bad = d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: x } }, { binding: 1, resource: { buffer: y } }, { binding: 2, resource: { buffer: u } }] });
  const enc = d.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, good);
  pass.dispatchWorkgroups(1);
  pass.setBindGroup(0, bad);
  pass.dispatchWorkgroups(1);
  pass.dispatchWorkgroups(1);
  pass.end();
  d.queue.submit([enc.finish()]);
  const s = emulationStats(d);
  assert.equal(s.commandBuffersRejected, 1);
  assert.equal(s.dispatchesDropped, 3, 'the valid dispatch in the same command buffer never ran either');
  d.destroy();
});

test('a storage binding larger than maxStorageBufferBindingSize is a validation error', async () => {
  const d = await newDevice({ contents: 'none' });
  const module = d.createShaderModule({ code: KERNEL });
  const pipeline = d.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const limit = d.limits.maxStorageBufferBindingSize;
  const big = d.createBuffer({ size: limit + 256, usage: BU.STORAGE });
  const u = d.createBuffer({ size: 16, usage: BU.UNIFORM });
  d.pushErrorScope('validation');
  d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: big } }, { binding: 1, resource: { buffer: big, size: 256 } }, { binding: 2, resource: { buffer: u } }] });
  const e = await d.popErrorScope();
  assert.equal(e?.constructor.name, 'GPUValidationError');
  assert.match(e.message, /> maxStorageBufferBindingSize/);
  assert.equal(emulationStats(d).bindGroupsInvalid, 1);
  d.destroy();
});

test('setImmediates (a model): validated against maxImmediateSize and 4-byte alignment, counted', async () => {
  const d = await newDevice();
  const code = 'struct U { n: u32, k: f32 }\nvar<immediate> u: U;\n@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n'
    + '@compute @workgroup_size(1) fn main() { y[0] = f32(u.n) + u.k; }';
  const pipeline = d.createComputePipeline({ layout: 'auto', compute: { module: d.createShaderModule({ code }), entryPoint: 'main' } });
  const y = d.createBuffer({ size: 16, usage: BU.STORAGE });
  const bg = d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: y } }] });
  const run = (fn) => {
    d.pushErrorScope('validation');
    const enc = d.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bg);
    fn(pass);
    pass.dispatchWorkgroups(1);
    pass.end();
    d.queue.submit([enc.finish()]);
    return d.popErrorScope();
  };
  assert.equal(await run((p) => p.setImmediates(0, new Uint32Array([3, 0]))), null);
  assert.equal(emulationStats(d).immediatesSet, 1);
  assert.match((await run((p) => p.setImmediates(60, new Uint32Array([1, 2]))))?.message ?? '', /exceeds maxImmediateSize 64/);
  assert.match((await run((p) => p.setImmediates(2, new Uint32Array([1]))))?.message ?? '', /not a multiple of 4/);
  assert.throws(() => run((p) => p.setImmediates(0, new Uint32Array([1]), 0, 2)), { name: 'OperationError' });
  assert.ok(modelLabels({}).some((m) => m.startsWith('immediates (a model)')));
  d.destroy();
});
