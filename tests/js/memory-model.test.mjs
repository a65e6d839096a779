// The memory-model formula (web/emulation/memory-model.js) and its parameters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveModel, encodedLengths, bindGroupBytes, stageBytes } from '../../web/emulation/memory-model.js';
import { emulationStats } from '../../web/emulation/webgpu-emulated.js';
import { newDevice } from './helpers.mjs';

const buf = (binding, visibility) => ({ binding, visibility, kind: 'buffer', type: 'storage' });

test('defaults: one 16 KiB page per stage with bindings', () => {
  const m = resolveModel();
  assert.equal(bindGroupBytes(m, encodedLengths(m, [buf(0, 4), buf(1, 4), buf(2, 4)])), 16384);
  assert.equal(bindGroupBytes(m, encodedLengths(m, [buf(0, 1 | 2), buf(1, 2)])), 2 * 16384); // vertex + fragment
  assert.equal(bindGroupBytes(m, encodedLengths(m, [])), 0);
  // 150,000 bind groups (field report) under the default model:
  assert.equal(150000 * 16384, 2457600000);
});

test('pageBytes rounding and bytesPerStage minimum', () => {
  const raw = resolveModel({ bytesPerStage: 0, pageBytes: 0 });
  assert.equal(bindGroupBytes(raw, encodedLengths(raw, [buf(0, 4), buf(1, 4), buf(2, 4)])), 24);
  const pages = resolveModel({ bytesPerStage: 0, pageBytes: 4096 });
  assert.equal(stageBytes(pages, 24), 4096);
  assert.equal(stageBytes(pages, 4097), 8192);
  const floor = resolveModel({ bytesPerStage: 256, pageBytes: 0 });
  assert.equal(stageBytes(floor, 24), 256);
  assert.equal(stageBytes(floor, 800), 800);
  const wide = resolveModel({ argumentBytes: { buffer: 16 }, bytesPerStage: 0, pageBytes: 0 });
  assert.equal(bindGroupBytes(wide, encodedLengths(wide, [buf(0, 4)])), 16);
  assert.throws(() => resolveModel({ pageBytes: -1 }), TypeError);
});

test('device options reach the ledger', async () => {
  const device = await newDevice({ bytesPerStage: 0, pageBytes: 4096 });
  const layout = device.createBindGroupLayout({ entries: [{ binding: 0, visibility: 4, buffer: { type: 'storage' } }] });
  const b = device.createBuffer({ size: 64, usage: 128 });
  const bgs = [0, 1, 2].map(() => device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: b } }] }));
  const st = emulationStats(device);
  assert.equal(st.modeledNativeBytes, 3 * 4096);
  assert.equal(st.model.pageBytes, 4096);
  assert.equal(bgs.length, 3);
});

test('reportCostToJs makes each bind group hold a JS ArrayBuffer of its modeled size', async () => {
  const device = await newDevice({ reportCostToJs: true, bytesPerStage: 1024, pageBytes: 0 });
  const layout = device.createBindGroupLayout({ entries: [{ binding: 0, visibility: 4, buffer: { type: 'uniform' } }] });
  const b = device.createBuffer({ size: 64, usage: 64 });
  device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: b } }] });
  assert.equal(emulationStats(device).model.reportCostToJs, true);
  assert.equal(emulationStats(device).modeledNativeBytes, 1024);
});
