// A raw decode-loop-like call sequence succeeds on the emulation, and the shared
// conformance sequence (web/emulation/conformance.js) passes on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEmulatedGPU, emulationStats } from '../../web/emulation/webgpu-emulated.js';
import { runConformance } from '../../web/emulation/conformance.js';
import { BU, newDevice, makeDecodeState, encodeDispatches } from './helpers.mjs';

test('decode loop: buffers, auto-layout pipeline, bind group per dispatch, 16 per pass, readback', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  const errors = [];
  device.addEventListener('uncapturederror', (e) => errors.push(e.error.message));
  device.pushErrorScope('validation');
  const tokens = 4;
  const dispatchesPerToken = 48;
  for (let t = 0; t < tokens; t++) {
    const data = new Float32Array(s.n).map((_, i) => t * 10 + i / 4);
    device.queue.writeBuffer(s.a, 0, data);
    for (let done = 0; done < dispatchesPerToken; done += 16) {
      device.queue.writeBuffer(s.u, 0, new Uint32Array([s.n, 0, 0, 0]));
      const enc = encodeDispatches(device, s, 16);
      if (done + 16 >= dispatchesPerToken) enc.copyBufferToBuffer(s.a, 0, s.readback, 0, s.n * 4);
      device.queue.submit([enc.finish()]);
    }
    assert.equal(s.readback.mapState, 'unmapped');
    const mapped = s.readback.mapAsync(GPUMapModeRead());
    assert.equal(s.readback.mapState, 'pending');
    await mapped;
    assert.equal(s.readback.mapState, 'mapped');
    const range = s.readback.getMappedRange();
    assert.deepEqual(new Float32Array(range), data);
    s.readback.unmap();
    assert.equal(range.byteLength, 0, 'unmap detaches the mapped ArrayBuffer');
  }
  assert.equal(await device.popErrorScope(), null);
  await device.queue.onSubmittedWorkDone();
  const stats = emulationStats(device);
  assert.equal(stats.bindGroupsCreated, tokens * dispatchesPerToken);
  assert.equal(stats.submits, tokens * dispatchesPerToken / 16);
  assert.equal(stats.commandBuffersInFlight, 0);
  assert.equal(stats.bindGroupRefsHeldByWork, 0);
  assert.deepEqual(errors, []);
});

function GPUMapModeRead() { return 1; }

test('dispatch results are untouched; copies and writes move real bytes', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device, 64);
  device.queue.writeBuffer(s.a, 0, new Float32Array(64).fill(3));
  const enc = encodeDispatches(device, s, 2);
  enc.copyBufferToBuffer(s.y, 0, s.readback, 0, 256);
  device.queue.submit([enc.finish()]);
  await s.readback.mapAsync(1);
  assert.deepEqual(new Float32Array(s.readback.getMappedRange()), new Float32Array(64), 'y was never written');
  s.readback.unmap();
});

test('MAP_WRITE mapping writes back on unmap', async () => {
  const device = await newDevice();
  const up = device.createBuffer({ size: 16, usage: BU.MAP_WRITE | BU.COPY_SRC });
  const dst = device.createBuffer({ size: 16, usage: BU.COPY_DST | BU.COPY_SRC });
  const rb = device.createBuffer({ size: 16, usage: BU.MAP_READ | BU.COPY_DST });
  await up.mapAsync(2);
  new Uint32Array(up.getMappedRange(8, 8)).set([7, 9]);
  up.unmap();
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(up, dst); // (source, destination, size?) overload
  enc.copyBufferToBuffer(dst, 0, rb, 0, 16);
  device.queue.submit([enc.finish()]);
  await rb.mapAsync(1);
  assert.deepEqual([...new Uint32Array(rb.getMappedRange())], [0, 0, 7, 9]);
});

test('shared conformance sequence passes on the emulation', async () => {
  const results = await runConformance(createEmulatedGPU({ logUncapturedErrors: false }));
  const failed = results.filter((r) => !r.ok);
  assert.ok(results.length >= 25, `ran ${results.length} checks`);
  assert.deepEqual(failed, []);
});
