// The emulation's iOS limit profiles, the page memory budget (lose-device / kill-page) and the
// optional models of older WebKit behaviour (web/emulation/memory-budget.js, memory-model.js
// WEBKIT_MODELS, internals.js LIMIT_PRESETS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEmulatedGPU, emulationStats } from '../../web/emulation/webgpu-emulated.js';
import { BU, newDevice, makeDecodeState, encodeDispatches, collectUntil, tick } from './helpers.mjs';

const MiB = 1 << 20;

async function deviceWithAdapterBufferLimit(options) {
  const adapter = await createEmulatedGPU({ logUncapturedErrors: false, ...options }).requestAdapter();
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: adapter.limits.maxBufferSize } });
  return { adapter, device };
}

test('a 300 MiB buffer: invalid under webkit-apple7 (256 MiB), valid under ios-2025 (1 GiB)', async () => {
  const old = await deviceWithAdapterBufferLimit({ limits: 'ios-2024' });
  assert.equal(old.adapter.limits.maxBufferSize, 256 * MiB);
  old.device.pushErrorScope('validation');
  old.device.createBuffer({ size: 300 * MiB, usage: BU.STORAGE });
  const err = await old.device.popErrorScope();
  assert.match(err?.message ?? '', /exceeds maxBufferSize 268435456/);
  assert.equal(emulationStats(old.device).buffersLiveBytes, 0, 'an invalid buffer is not charged');

  const now = await deviceWithAdapterBufferLimit({ limits: 'ios-2025' });
  assert.equal(now.adapter.limits.maxBufferSize, 1024 * MiB);
  assert.equal(now.adapter.limits.maxStorageBufferBindingSize, 256 * MiB, 'only maxBufferSize changed in 2025');
  now.device.pushErrorScope('validation');
  const big = now.device.createBuffer({ size: 300 * MiB, usage: BU.STORAGE });
  assert.equal(await now.device.popErrorScope(), null);
  assert.equal(emulationStats(now.device).buffersLiveBytes, 300 * MiB);
  assert.equal(emulationStats(now.device).modeledBufferBytes, 300 * MiB);
  big.destroy();
  assert.equal(emulationStats(now.device).buffersLiveBytes, 0);
});

test('budget lose-device: every device of the page is lost at the budget; earlier work stands', async () => {
  const gpu = createEmulatedGPU({ logUncapturedErrors: false, memoryBudgetBytes: 10 * MiB });
  const a = await (await gpu.requestAdapter()).requestDevice();
  const b = await (await gpu.requestAdapter()).requestDevice();
  const lost = [];
  a.lost.then((info) => lost.push(['a', info.reason, info.message]));
  b.lost.then((info) => lost.push(['b', info.reason, info.message]));
  const kept = a.createBuffer({ size: 4 * MiB, usage: BU.STORAGE });
  b.createBuffer({ size: 4 * MiB, usage: BU.STORAGE });
  assert.equal(emulationStats(a).memoryBudget.trips, 0, '8 MiB of 10: under the budget');
  await tick();
  assert.deepEqual(lost, []);
  a.createBuffer({ size: 4 * MiB, usage: BU.STORAGE }); // 12 MiB > 10 MiB: both devices lost
  assert.equal(emulationStats(a).lost, true);
  assert.equal(emulationStats(b).lost, true);
  await tick();
  assert.equal(lost.length, 2);
  for (const [, reason, message] of lost) {
    assert.equal(reason, 'unknown');
    assert.match(message, /lose-device at the memory budget: modeled 12582912 bytes > 10485760/);
  }
  assert.equal(emulationStats(a).buffersLiveBytes, 0, "a lost device's buffers are freed");
  assert.equal(kept.size, 4 * MiB, 'wrappers stay usable objects');
  await assert.rejects(kept.mapAsync(1), (e) => e.name === 'OperationError' || e.name === 'AbortError');
  assert.equal(emulationStats(a).memoryBudget.trips, 1);
});

test('budget counts bind group bytes with buffer bytes', async () => {
  const gpu = createEmulatedGPU({ logUncapturedErrors: false, memoryBudgetBytes: 3 * 16384 + 4096 });
  const device = await (await gpu.requestAdapter()).requestDevice();
  const s = makeDecodeState(device, 256); // buffers: 1024 + 1024 + 16 + 1024 = 3,088 bytes
  encodeDispatches(device, s, 3); // three 16 KiB bind groups: 49,152 + 3,088 = 52,240 <= 53,248
  assert.equal(emulationStats(device).lost, false);
  encodeDispatches(device, s, 1); // a fourth: 65,536 + 3,088 = 68,624 > 53,248
  assert.equal(emulationStats(device).lost, true);
});

test('budget kill-page: devices die silently, onKillPage runs once, the allocating call throws', async () => {
  const kills = [];
  const gpu = createEmulatedGPU({
    logUncapturedErrors: false, memoryBudgetBytes: MiB, atMemoryBudget: 'kill-page', onKillPage: (info) => kills.push(info),
  });
  const device = await (await gpu.requestAdapter()).requestDevice();
  let lostResolved = false;
  device.lost.then(() => { lostResolved = true; });
  device.createBuffer({ size: MiB, usage: BU.STORAGE });
  assert.throws(() => device.createBuffer({ size: 16, usage: BU.STORAGE }), (e) => e.name === 'EmulatedPageKilled');
  assert.equal(kills.length, 1);
  assert.equal(kills[0].modeledBytes, MiB + 16);
  assert.equal(kills[0].budgetBytes, MiB);
  assert.equal(kills[0].atBudget, 'kill-page');
  await tick();
  await tick();
  assert.equal(lostResolved, false, 'nobody is left to observe device.lost after a kill');
  assert.equal(emulationStats(device).memoryBudget.killed, true);
});

test('budget options are validated', () => {
  assert.throws(() => createEmulatedGPU({ memoryBudgetBytes: -1 }), TypeError);
  assert.throws(() => createEmulatedGPU({ memoryBudgetBytes: 1.5 }), TypeError);
  assert.throws(() => createEmulatedGPU({ memoryBudgetBytes: 1, atMemoryBudget: 'explode' }), /lose-device, kill-page/);
  assert.throws(() => createEmulatedGPU({ encoderRetainsBindGroups: 'yes' }), TypeError);
  assert.throws(() => createEmulatedGPU({ encoderRecordBytes: -8 }), TypeError);
});

test('model bufferRecordsEncoders: one record per (buffer, encoder) until the buffer is destroyed', async () => {
  const device = await newDevice({ bufferRecordsEncoders: true, encoderRecordBytes: 16 });
  const s = makeDecodeState(device);
  const st0 = emulationStats(device);
  assert.deepEqual(st0.model.webkitModels.map((m) => m.split(':')[0]), ['webkit-buffer-records-encoders']);
  for (let i = 0; i < 10; i++) {
    const enc = encodeDispatches(device, s, 4); // binds a, y, u: 3 buffers, recorded once per encoder
    enc.copyBufferToBuffer(s.y, 0, s.readback, 0, 16); // y again (no new record) and readback
    device.queue.submit([enc.finish()]);
  }
  const st = emulationStats(device);
  assert.equal(st.encoderRecords, 10 * 4);
  assert.equal(st.encoderRecordBytes, 10 * 4 * 16);
  assert.equal(st.modeledBufferBytes, st.buffersLiveBytes + 640);
  s.a.destroy(); // a's ten records go with it
  assert.equal(emulationStats(device).encoderRecords, 30);
  const off = await newDevice();
  const t = makeDecodeState(off);
  off.queue.submit([encodeDispatches(off, t, 4).finish()]);
  assert.equal(emulationStats(off).encoderRecords, 0, 'off by default (post-fix WebKit)');
});

/** Submit `n` encoders of `dispatches` new bind groups each, returning the encoders (as an
 *  application that keeps its encoders, gc-retention's encoder-refs). A plain function, so no
 *  suspended async frame holds the last encoder. */
function submitKeepingEncoders(device, s, n, dispatches) {
  const keep = [];
  for (let i = 0; i < n; i++) {
    const enc = encodeDispatches(device, s, dispatches);
    device.queue.submit([enc.finish()]);
    keep.push(enc);
  }
  return keep;
}

test('model encoderRetainsBindGroups: bind groups live while their encoder wrapper lives', async () => {
  const run = async (options) => {
    const device = await newDevice(options);
    const s = makeDecodeState(device);
    const keep = submitKeepingEncoders(device, s, 5, 20);
    await device.queue.onSubmittedWorkDone();
    await collectUntil(() => emulationStats(device).bindGroupsCollected >= 100, 10);
    const held = emulationStats(device).bindGroupsLive;
    keep.length = 0;
    await collectUntil(() => emulationStats(device).bindGroupsCollected >= 100, 20);
    return { held, after: emulationStats(device).bindGroupsLive };
  };
  const today = await run({});
  assert.equal(today.held, 0, 'engines keep only the native record; work is done, wrappers collected');
  const model = await run({ encoderRetainsBindGroups: true });
  assert.equal(model.held, 100, 'every bind group set on a kept encoder stays alive');
  assert.equal(model.after, 0, 'and goes once the encoder wrappers are collected');
});
