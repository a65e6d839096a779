// The in-worker probes (web/probes/) on the emulated WebGPU: the new counters, live buffer
// bytes, and device events (device_lost, uncaptured_error) with the step they fall in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installEmulatedWebGPU } from '../../web/emulation/webgpu-emulated.js';
import { installProbes, StepProbe } from '../../web/probes/index.js';
import { counts, snapshot } from '../../web/probes/counters.js';
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
