// The modeled native-memory ledger: bytes follow live bind groups; the JS GC releases
// them through the wrappers; in-flight work keeps them alive until it is done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emulationStats, completeSubmittedWork } from '../../web/emulation/webgpu-emulated.js';
import { BU, newDevice, makeDecodeState, encodeDispatches, collectUntil, getGc, tick } from './helpers.mjs';

const PER_BIND_GROUP = 16384; // default model: one compute stage, one 16 KiB page

function assertLedgerConsistent(device, where) {
  const s = emulationStats(device);
  assert.equal(s.bindGroupsLive, s.bindGroupsCreated - s.bindGroupsCollected, where);
  assert.equal(s.modeledNativeBytes, s.bindGroupsLive * PER_BIND_GROUP, where);
  return s;
}

/** Create `count` bind groups and drop every reference to them. */
function createAndDrop(device, s, count) {
  for (let i = 0; i < count; i++) {
    device.createBindGroup({
      layout: s.pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: s.a } },
        { binding: 1, resource: { buffer: s.y } },
        { binding: 2, resource: { buffer: s.u } },
      ],
    });
  }
}

test('model size per bind group and stats shape', async () => {
  const device = await newDevice();
  const st = emulationStats(device);
  assert.equal(st.model.bytesPerStage, 16384);
  assert.equal(st.model.pageBytes, 16384);
  assert.equal(st.model.bytesPerComputeOnlyBindGroup, PER_BIND_GROUP);
  assert.match(st.model.source, /BindGroup\.mm/);
  for (const k of ['bindGroupsCreated', 'bindGroupsCollected', 'bindGroupsLive', 'modeledNativeBytes', 'buffersLiveBytes']) {
    assert.equal(typeof st[k], 'number', k);
  }
  assert.equal(device.__harnessLedger.modeledNativeBytes, 0);
});

test('modeled bytes == live bind groups x model size at every step; gc releases them', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  for (let step = 0; step < 5; step++) {
    createAndDrop(device, s, 100);
    assertLedgerConsistent(device, `after create step ${step}`);
  }
  const before = assertLedgerConsistent(device, 'before gc');
  assert.equal(before.bindGroupsLive, 500);
  assert.equal(before.modeledNativeBytes, 500 * PER_BIND_GROUP);
  const ok = await collectUntil(() => emulationStats(device).bindGroupsCollected >= 400);
  assert.ok(ok, `collected ${emulationStats(device).bindGroupsCollected} of 500`);
  const after = assertLedgerConsistent(device, 'after gc');
  assert.ok(after.modeledNativeBytes < before.modeledNativeBytes);
  assert.equal(after.bindGroupWrappersCollected, after.bindGroupsCollected);
  assert.equal(after.modeledNativeBytesPeak, 500 * PER_BIND_GROUP);
});

test('a bind group held by user code is not released by gc', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  const kept = device.createBindGroup({
    layout: s.pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: s.a } }, { binding: 1, resource: { buffer: s.y } }, { binding: 2, resource: { buffer: s.u } }],
  });
  createAndDrop(device, s, 50);
  await collectUntil(() => emulationStats(device).bindGroupsCollected >= 50);
  const st = assertLedgerConsistent(device, 'after gc');
  assert.equal(st.bindGroupsLive, 1);
  assert.ok(kept);
});

test('bind groups used by not-yet-done work keep their native memory until it is done', async () => {
  const device = await newDevice({ completion: 'manual' });
  const s = makeDecodeState(device);
  (() => {
    const enc = encodeDispatches(device, s, 32); // 32 bind groups, references dropped on return
    device.queue.submit([enc.finish()]);
  })();
  let st = assertLedgerConsistent(device, 'after submit');
  assert.equal(st.bindGroupsLive, 32);
  assert.equal(st.bindGroupRefsHeldByWork, 32);
  assert.equal(st.commandBuffersInFlight, 1);

  // Wrappers become garbage and are collected, but the in-flight work still uses them.
  await collectUntil(() => emulationStats(device).bindGroupWrappersCollected >= 32);
  st = assertLedgerConsistent(device, 'after gc, work not done');
  assert.equal(st.bindGroupWrappersCollected, 32);
  assert.equal(st.bindGroupsCollected, 0);
  assert.equal(st.modeledNativeBytes, 32 * PER_BIND_GROUP);

  let done = false;
  device.queue.onSubmittedWorkDone().then(() => { done = true; });
  await tick();
  assert.equal(done, false, 'manual completion: not done yet');
  completeSubmittedWork(device);
  st = assertLedgerConsistent(device, 'after work done');
  assert.equal(st.bindGroupsCollected, 32);
  assert.equal(st.modeledNativeBytes, 0);
  assert.equal(st.bindGroupRefsHeldByWork, 0);
  await tick(); await tick();
  assert.equal(done, true);
});

test('retainWrappersUntilDone keeps the wrappers alive until the work is done', async () => {
  const device = await newDevice({ completion: 'manual', retainWrappersUntilDone: true });
  const s = makeDecodeState(device);
  (() => { device.queue.submit([encodeDispatches(device, s, 8).finish()]); })();
  await collectUntil(() => false, 4);
  assert.equal(emulationStats(device).bindGroupWrappersCollected, 0);
  completeSubmittedWork(device);
  const ok = await collectUntil(() => emulationStats(device).bindGroupsCollected === 8);
  assert.ok(ok, `collected ${emulationStats(device).bindGroupsCollected}`);
  assertLedgerConsistent(device, 'end');
});

test('an encoder that is never finished retains its bind groups until it is collected', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  let enc = encodeDispatches(device, s, 8);
  await collectUntil(() => emulationStats(device).bindGroupWrappersCollected >= 8);
  assert.equal(emulationStats(device).bindGroupsLive, 8);
  assert.equal(emulationStats(device).bindGroupRefsHeldByWork, 8);
  enc = null;
  const ok = await collectUntil(() => emulationStats(device).bindGroupsLive === 0);
  assert.ok(ok, `live ${emulationStats(device).bindGroupsLive}`);
  assert.equal(enc, null);
});

test('default completion: work is done in a later task, then gc frees everything', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device);
  for (let t = 0; t < 4; t++) device.queue.submit([encodeDispatches(device, s, 16).finish()]);
  assert.equal(emulationStats(device).commandBuffersInFlight, 4);
  await device.queue.onSubmittedWorkDone();
  assert.equal(emulationStats(device).commandBuffersInFlight, 0);
  const ok = await collectUntil(() => emulationStats(device).bindGroupsLive === 0);
  assert.ok(ok);
  assertLedgerConsistent(device, 'end');
});

test('buffer bytes: created - destroyed - collected; a live bind group pins its buffers', async () => {
  const device = await newDevice();
  const s = makeDecodeState(device, 256); // a, y: 1024 B; u: 16; readback: 1024
  const base = emulationStats(device).buffersLiveBytes;
  assert.equal(base, 1024 + 1024 + 16 + 1024);
  s.readback.destroy();
  assert.equal(emulationStats(device).buffersLiveBytes, base - 1024);
  assert.equal(emulationStats(device).buffersDestroyed, 1);
  // A buffer whose wrapper is dropped but which a live bind group binds stays charged.
  let bg = (() => {
    const extra = device.createBuffer({ size: 4096, usage: BU.STORAGE });
    return device.createBindGroup({
      layout: s.pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: extra } }, { binding: 1, resource: { buffer: s.y } }, { binding: 2, resource: { buffer: s.u } }],
    });
  })();
  (() => { device.createBuffer({ size: 8192, usage: BU.STORAGE }); })();
  await collectUntil(() => emulationStats(device).buffersCollected >= 1);
  assert.equal(emulationStats(device).buffersLiveBytes, base - 1024 + 4096);
  bg = null;
  await collectUntil(() => emulationStats(device).buffersCollected >= 2);
  assert.equal(emulationStats(device).buffersLiveBytes, base - 1024);
  assert.equal(bg, null);
  getGc();
});
