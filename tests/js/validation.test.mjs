// Invalid usage is rejected the way WebGPU rejects it (GPUValidationError in the error
// scope, invalid objects, OperationError rejections/exceptions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classes, emulationStats } from '../../web/emulation/webgpu-emulated.js';
import { BU, newDevice, makeDecodeState, encodeDispatches } from './helpers.mjs';

const { GPUValidationError } = classes;

async function scoped(device, fn) {
  device.pushErrorScope('validation');
  fn();
  return device.popErrorScope();
}

test('createBindGroup with the wrong entry count -> GPUValidationError, not charged', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  const before = emulationStats(device).modeledNativeBytes;
  let bg;
  const err = await scoped(device, () => {
    bg = device.createBindGroup({ layout: s.pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: s.a } }] });
  });
  assert.ok(err instanceof GPUValidationError);
  assert.match(err.message, /1 entries given but the layout has 3/);
  assert.equal(emulationStats(device).modeledNativeBytes, before);
  assert.equal(emulationStats(device).bindGroupsInvalid, 1);
  // Using the invalid bind group makes the encoder invalid; finish() reports it.
  const err2 = await scoped(device, () => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(s.pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(1);
    pass.end();
    enc.finish();
  });
  assert.ok(err2 instanceof GPUValidationError);
});

test('mapAsync without MAP_READ rejects with OperationError and reports a validation error', async () => {
  const device = await newDevice();
  const buf = device.createBuffer({ size: 16, usage: BU.STORAGE | BU.COPY_DST });
  device.pushErrorScope('validation');
  await assert.rejects(buf.mapAsync(1), (e) => e.name === 'OperationError');
  assert.ok((await device.popErrorScope()) instanceof GPUValidationError);
  assert.equal(buf.mapState, 'unmapped');
});

test('getMappedRange when not mapped throws OperationError', async () => {
  const device = await newDevice();
  const buf = device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.COPY_DST });
  assert.throws(() => buf.getMappedRange(), (e) => e.name === 'OperationError');
});

test('bindings: missing usage, range past the end, below minBindingSize', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  const layout = s.pipeline.getBindGroupLayout(0);
  const noStorage = device.createBuffer({ size: 1024, usage: BU.UNIFORM });
  for (const entries of [
    [{ binding: 0, resource: { buffer: noStorage } }, { binding: 1, resource: { buffer: s.y } }, { binding: 2, resource: { buffer: s.u } }],
    [{ binding: 0, resource: { buffer: s.a, offset: 256, size: 1024 } }, { binding: 1, resource: { buffer: s.y } }, { binding: 2, resource: { buffer: s.u } }],
    [{ binding: 0, resource: { buffer: s.a } }, { binding: 1, resource: { buffer: s.y } }, { binding: 2, resource: { buffer: s.u, size: 8 } }],
    [{ binding: 0, resource: { buffer: s.a } }, { binding: 1, resource: { buffer: s.y } }, { binding: 5, resource: { buffer: s.u } }],
  ]) {
    const err = await scoped(device, () => device.createBindGroup({ layout, entries }));
    assert.ok(err instanceof GPUValidationError, JSON.stringify(entries.map((e) => e.binding)));
  }
});

test('submit: destroyed buffer, submitted twice; finish with an open pass', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  const cb = encodeDispatches(device, s, 2).finish();
  assert.equal(await scoped(device, () => device.queue.submit([cb])), null);
  assert.ok((await scoped(device, () => device.queue.submit([cb]))) instanceof GPUValidationError);

  const cb2 = encodeDispatches(device, s, 1).finish();
  s.y.destroy();
  assert.ok((await scoped(device, () => device.queue.submit([cb2]))) instanceof GPUValidationError);

  const err = await scoped(device, () => { const enc = device.createCommandEncoder(); enc.beginComputePass(); enc.finish(); });
  assert.match(err.message, /pass is still open/);
});

test('errors outside a scope fire uncapturederror; empty popErrorScope rejects', async () => {
  const device = await newDevice();
  const got = new Promise((resolve) => { device.onuncapturederror = (e) => { e.preventDefault(); resolve(e.error); }; });
  device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.STORAGE });
  assert.ok((await got) instanceof GPUValidationError);
  await assert.rejects(device.popErrorScope(), (e) => e.name === 'OperationError');
});

test('getBindGroupLayout returns a new wrapper each call, compatible with the pipeline', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  assert.notEqual(s.pipeline.getBindGroupLayout(0), s.pipeline.getBindGroupLayout(0));
  assert.throws(() => s.pipeline.getBindGroupLayout(4), RangeError);
  const err = await scoped(device, () => s.pipeline.getBindGroupLayout(1));
  assert.ok(err instanceof GPUValidationError);
});
