// The in-worker probes (web/probes/) on the emulated WebGPU: the new counters, live buffer
// bytes, and device events (device_lost, uncaptured_error) with the step they fall in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installEmulatedWebGPU } from '../../web/emulation/webgpu-emulated.js';
import { installProbes, StepProbe } from '../../web/probes/index.js';
import { GC_DONE_GLOBAL } from '../../web/probes/step.js';
import { counts, snapshot, takeCreatedBuffers, MAX_BUFFER_GROUPS } from '../../web/probes/counters.js';
import { liveSnapshot } from '../../web/probes/live-objects.js';
import { BU, KERNEL, collectUntil, tick } from './helpers.mjs';

const scope = { navigator: {} };
const posted = [];
const gpu = installEmulatedWebGPU(scope, { logUncapturedErrors: false, memoryBudgetBytes: 64 << 20 }).gpu;
const probes = installProbes(scope, { post: (s) => posted.push(s) });
const steps = new StepProbe({ post: (s) => posted.push(s) });

async function device() {
  return (await gpu.requestAdapter()).requestDevice();
}

const delta = (before, name) => counts[name] - before[name];

test('counters: beginComputePass, copyBufferToBuffer, onSubmittedWorkDone, createBufferBytes', async () => {
  assert.ok(probes.installed.includes('GPUCommandEncoder.beginComputePass'));
  const d = await device();
  const before = snapshot();
  const a = d.createBuffer({ size: 256, usage: BU.STORAGE | BU.COPY_SRC });
  const b = d.createBuffer({ size: 1024, usage: BU.COPY_DST | BU.MAP_READ });
  const enc = d.createCommandEncoder();
  enc.beginComputePass().end();
  enc.beginComputePass().end();
  enc.copyBufferToBuffer(a, 0, b, 0, 256);
  enc.copyBufferToBuffer(a, 0, b, 256, 256);
  enc.copyBufferToBuffer(a, 0, b, 512, 256);
  d.queue.submit([enc.finish()]);
  await d.queue.onSubmittedWorkDone();
  assert.equal(delta(before, 'createBuffer'), 2);
  assert.equal(delta(before, 'createBufferBytes'), 1280);
  assert.equal(delta(before, 'beginComputePass'), 2);
  assert.equal(delta(before, 'copyBufferToBuffer'), 3);
  assert.equal(delta(before, 'onSubmittedWorkDone'), 1);
  assert.equal(delta(before, 'submit'), 1);
  d.destroy();
});

/** Buffers created in a plain function, so no suspended async frame keeps `dropped` alive. */
function makeBuffers(d) {
  const kept = d.createBuffer({ size: 4096, usage: BU.STORAGE });
  const destroyed = d.createBuffer({ size: 1000, usage: BU.STORAGE });
  d.createBuffer({ size: 300, usage: BU.STORAGE }); // dropped: never destroyed
  destroyed.destroy();
  destroyed.destroy(); // counted once
  return kept;
}

test('live buffer bytes = created - destroyed - collected, each buffer counted once', async () => {
  const d = await device();
  await collectUntil(() => false, 3); // earlier tests' garbage first
  const l0 = liveSnapshot();
  const kept = makeBuffers(d);
  const l1 = liveSnapshot();
  assert.equal(l1.buffer_bytes_created - l0.buffer_bytes_created, 5396);
  assert.equal(l1.buffer_bytes_destroyed - l0.buffer_bytes_destroyed, 1000);
  assert.equal(l1.buffer_bytes_live - l0.buffer_bytes_live, 4396);
  const collected = await collectUntil(() => liveSnapshot().buffer_bytes_collected - l0.buffer_bytes_collected >= 300);
  assert.ok(collected, 'the dropped 300-byte buffer was collected');
  const l2 = liveSnapshot();
  assert.equal(l2.buffer_bytes_collected - l0.buffer_bytes_collected, 300, 'the destroyed one is not counted again when collected');
  assert.equal(l2.buffer_bytes_live - l0.buffer_bytes_live, 4096);
  d.destroy(); // the device's remaining buffers go with it
  const l3 = liveSnapshot();
  assert.equal(l3.buffer_bytes_live - l0.buffer_bytes_live, 0);
  assert.equal(l3.buffer_bytes_destroyed - l0.buffer_bytes_destroyed, 5096);
  for (const l of [l1, l2, l3]) assert.equal(l.buffer_bytes_live, l.buffer_bytes_created - l.buffer_bytes_destroyed - l.buffer_bytes_collected);
  assert.equal(kept.size, 4096);
});

test('uncaptured_error samples carry the step; destroy() alone posts no loss', async () => {
  const d = await device();
  posted.length = 0;
  steps.beginStep(7);
  d.createBuffer({ size: 16, usage: 0 }); // invalid usage: a validation error nobody captures
  await tick();
  await tick();
  steps.endStep(7);
  const errors = posted.filter((s) => s.kind === 'uncaptured_error');
  assert.equal(errors.length, 1);
  assert.equal(errors[0].step, 7);
  assert.equal(errors[0].error_type, 'GPUValidationError');
  assert.match(errors[0].message, /usage must not be 0/);
  d.destroy(); // a workload releasing its device: not a loss
  await probes.settle();
  assert.deepEqual(posted.filter((s) => s.kind === 'device_lost'), []);
});

test('a device destroyed mid-run and then used: device_lost with both steps', async () => {
  const d = await device();
  posted.length = 0;
  steps.beginStep(3);
  d.destroy();
  steps.endStep(3);
  steps.beginStep(4);
  d.queue.writeBuffer(d.createBuffer({ size: 16, usage: BU.COPY_DST }), 0, new Uint32Array(4));
  d.createCommandEncoder(); // a second use: still one sample
  const lost = posted.filter((s) => s.kind === 'device_lost');
  assert.equal(lost.length, 1);
  assert.deepEqual({ reason: lost[0].reason, step: lost[0].step, destroy_step: lost[0].destroy_step }, { reason: 'destroyed', step: 4, destroy_step: 3 });
  assert.match(lost[0].message, /destroy\(\) was called at step 3, then the device was used \(GPUDevice.createBuffer\)/);
  steps.endStep(4);
});

test('a device lost by the engine (emulated lose-device at the memory budget): device_lost, reason unknown', async () => {
  const d = await device();
  posted.length = 0;
  steps.beginStep(11);
  const m = d.createShaderModule({ code: KERNEL });
  void m;
  d.createBuffer({ size: 65 << 20, usage: BU.STORAGE }); // over the 64 MiB budget
  await probes.settle();
  const lost = posted.filter((s) => s.kind === 'device_lost');
  assert.equal(lost.length, 1, JSON.stringify(lost));
  assert.equal(lost[0].reason, 'unknown');
  assert.equal(lost[0].step, 11);
  assert.match(lost[0].message, /lose-device at the memory budget/);
  steps.endStep(11);
});

test('counters: setBindGroup with and without dynamic offsets, createBuffer bytes per usage flag', async () => {
  const d = await device();
  const module = d.createShaderModule({ code: KERNEL });
  const layout = d.createBindGroupLayout({ entries: [
    { binding: 0, visibility: 4, buffer: { type: 'read-only-storage' } },
    { binding: 1, visibility: 4, buffer: { type: 'storage' } },
    { binding: 2, visibility: 4, buffer: { type: 'uniform', hasDynamicOffset: true } }] });
  const pipeline = d.createComputePipeline({ layout: d.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: 'main' } });
  takeCreatedBuffers();
  const before = snapshot();
  const a = d.createBuffer({ label: 'a', size: 256, usage: BU.STORAGE | BU.COPY_DST });
  const y = d.createBuffer({ label: 'y', size: 256, usage: BU.STORAGE | BU.COPY_SRC });
  const u = d.createBuffer({ label: 'params', size: 512, usage: BU.UNIFORM | BU.COPY_DST });
  const u2 = d.createBuffer({ label: 'params', size: 512, usage: BU.UNIFORM | BU.COPY_DST });
  const bg = d.createBindGroup({ layout, entries: [
    { binding: 0, resource: { buffer: a } }, { binding: 1, resource: { buffer: y } },
    { binding: 2, resource: { buffer: u, size: 16 } }] });
  const enc = d.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bg, [0]);
  pass.dispatchWorkgroups(1);
  pass.setBindGroup(0, bg, new Uint32Array([7, 256]), 1, 1); // the data-start/length form
  pass.dispatchWorkgroups(1);
  pass.setBindGroup(0, null);
  pass.end();
  d.queue.submit([enc.finish()]);
  assert.equal(delta(before, 'setBindGroup'), 3);
  assert.equal(delta(before, 'setBindGroupDynamicOffsets'), 2);
  assert.equal(delta(before, 'createBufferBytesStorage'), 512);
  assert.equal(delta(before, 'createBufferBytesUniform'), 1024);
  assert.equal(delta(before, 'createBufferBytesCopyDst'), 256 + 1024);
  assert.equal(delta(before, 'createBufferBytesCopySrc'), 256);
  assert.equal(delta(before, 'createBufferBytesMapRead'), 0);
  const groups = takeCreatedBuffers();
  assert.deepEqual(groups, [
    { label: 'params', usage: BU.UNIFORM | BU.COPY_DST, buffers: 2, bytes: 1024 },
    { label: 'a', usage: BU.STORAGE | BU.COPY_DST, buffers: 1, bytes: 256 },
    { label: 'y', usage: BU.STORAGE | BU.COPY_SRC, buffers: 1, bytes: 256 }]);
  assert.deepEqual(takeCreatedBuffers(), [], 'handed over once');
  for (const b of [a, y, u, u2]) b.destroy();
  d.destroy();
});

test('created buffers: at most MAX_BUFFER_GROUPS groups, the rest summed into (other); a step carries its own', async () => {
  const d = await device();
  const sent = [];
  const probe = new StepProbe({ post: (s) => sent.push(s) });
  d.createBuffer({ label: 'before the step', size: 4, usage: BU.STORAGE });
  probe.beginStep(0);
  for (let i = 0; i < MAX_BUFFER_GROUPS + 5; i++) d.createBuffer({ label: `b${i}`, size: 4 * (i + 1), usage: BU.STORAGE }).destroy();
  const s = probe.endStep(0);
  const g = s.created_buffers;
  assert.equal(g.length, MAX_BUFFER_GROUPS);
  assert.equal(g.reduce((n, x) => n + x.buffers, 0), MAX_BUFFER_GROUPS + 5);
  assert.deepEqual(g[0], { label: `b${MAX_BUFFER_GROUPS + 4}`, usage: BU.STORAGE, buffers: 1, bytes: 4 * (MAX_BUFFER_GROUPS + 5) });
  const other = g[g.length - 1];
  assert.equal(other.label, '(other)');
  assert.equal(other.usage, 0);
  assert.equal(other.buffers, 6); // the 6 smallest: b0..b5
  assert.equal(other.bytes, 4 * (1 + 2 + 3 + 4 + 5 + 6));
  assert.ok(!g.some((x) => x.label === 'before the step'));
  d.destroy();
});

test('checkpoint: waits after steps N-1, 2N-1… until the harness says the collection was done; a wait that runs out posts a log', async () => {
  const sent = [];
  let flushes = 0;
  const sink = { post: (x) => { sent.push(x); return Promise.resolve(); }, flush: () => { flushes++; return Promise.resolve(); } };
  assert.equal(await new StepProbe(sink, null, true, { every: 4, waitMs: 0 }).checkpoint(3), false, 'no wait allowed: at once');
  assert.equal(flushes, 0);
  const probe = new StepProbe(sink, null, true, { every: 4, waitMs: 300 });
  assert.equal(await probe.checkpoint(2), false, 'not a checkpoint');
  assert.equal(flushes, 0);
  let answered = null;
  const waiting = probe.checkpoint(3).then((v) => { answered = v; });
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  assert.equal(flushes, 1, 'the steps held leave before the wait');
  assert.equal(answered, null, 'still waiting');
  assert.equal(globalThis[GC_DONE_GLOBAL](3), true);
  await waiting;
  assert.equal(answered, true);
  globalThis[GC_DONE_GLOBAL](7); // answered while the flush was being answered
  assert.equal(await probe.checkpoint(7), true);
  const t0 = performance.now();
  assert.equal(await probe.checkpoint(11), false, 'no answer');
  assert.ok(performance.now() - t0 >= 290);
  assert.deepEqual(sent.map((x) => x.kind), ['log', 'heartbeat']);
  assert.match(sent[0].message, /^gc checkpoint after step 11: the harness did not answer within 0\.3 s/);
  delete globalThis[GC_DONE_GLOBAL];
});
