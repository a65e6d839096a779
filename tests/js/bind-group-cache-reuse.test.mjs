// workloads/lib/bind-group-cache.js records reuse distances: from one run, the hit rate at every
// capacity. On the emulated WebGPU in node: the prediction from a run at one capacity equals the
// hits the cache really has at others (an engine-like pattern: fixed nodes, some binding buffers
// that rotate through a pool), and destroyed buffers leave the stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installEmulatedWebGPU } from '../../web/emulation/webgpu-emulated.js';
import { ReuseDistances, installBindGroupCache } from '../../workloads/lib/bind-group-cache.js';

installEmulatedWebGPU(globalThis, { logUncapturedErrors: false });
const U = { STORAGE: 128 };

function brute(seq) {
  const stack = [];
  return seq.map((k) => {
    const i = stack.indexOf(k);
    if (i >= 0) stack.splice(i, 1);
    stack.unshift(k);
    return i;
  });
}

test('ReuseDistances equals a brute-force LRU stack, through renumbering and removals', () => {
  const r = new ReuseDistances();
  const seq = [];
  let x = 7;
  for (let i = 0; i < 30000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    seq.push(`k${x % 900}`);
  }
  assert.deepEqual(seq.map((k) => r.access(k)), brute(seq));
  const distinct = new Set(seq).size;
  r.remove(seq[0]);
  const s = r.snapshot();
  assert.equal(s.lookups, 30000);
  assert.equal(s.cold, distinct);
  assert.equal(s.keys, distinct - 1);
  assert.equal(s.distances.reduce((n, [, c]) => n + c, 0), 30000 - distinct);
  assert.ok(r.size < 4 * distinct + 1024, 'times renumbered: the tree stays proportional to the live keys');
});

async function runPattern(maxEntries, tokens = 30) {
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const layout = device.createBindGroupLayout({ entries: [
    { binding: 0, visibility: 4, buffer: { type: 'storage' } }, { binding: 1, visibility: 4, buffer: { type: 'storage' } }] });
  const fixed = Array.from({ length: 40 }, () => device.createBuffer({ size: 64, usage: U.STORAGE }));
  const pool = Array.from({ length: 6 }, () => device.createBuffer({ size: 64, usage: U.STORAGE }));
  const cache = installBindGroupCache({ maxEntries });
  let warm = null;
  for (let t = 0; t < tokens; t++) {
    for (let n = 0; n < 40; n++) {
      const second = n < 8 ? pool[(t + n) % pool.length] : fixed[(n + 1) % 40];
      device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: fixed[n] } }, { binding: 1, resource: { buffer: second } }] });
    }
    const w = cache.takeWindow();
    assert.equal(w.lookups, 40);
    assert.equal(w.distinctKeys, 40);
    if (t === 0) warm = { reuse: cache.reuseDistances(), stats: cache.stats() };
  }
  const out = { warm, end: cache.reuseDistances(), stats: cache.stats(), device, pool };
  cache.uninstall();
  return out;
}

function predicted(warm, end, capacity) {
  const w = new Map(warm.distances);
  let hits = 0;
  for (const [d, n] of end.distances) if (d < capacity) hits += n - (w.get(d) ?? 0);
  return hits;
}

test('one run predicts the hits of every other capacity exactly', async () => {
  const big = await runPattern(4096);
  for (const capacity of [16, 39, 40, 41, 60, 72, 80, 200]) {
    const r = await runPattern(capacity);
    const measured = r.stats.hits - r.warm.stats.hits;
    assert.equal(predicted(big.warm.reuse, big.end, capacity), measured, `capacity ${capacity}`);
  }
});

test('a destroyed buffer takes its keys out of the stack', async () => {
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const layout = device.createBindGroupLayout({ entries: [{ binding: 0, visibility: 4, buffer: { type: 'storage' } }] });
  const a = device.createBuffer({ size: 256, usage: U.STORAGE });
  const b = device.createBuffer({ size: 256, usage: U.STORAGE });
  const cache = installBindGroupCache({ maxEntries: 4096 });
  try {
    const group = (buffer, offset) => device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer, offset, size: 64 } }] });
    group(a, 0); group(a, 256 - 256); group(b, 0);
    assert.equal(cache.reuseDistances().keys, 2);
    a.destroy();
    assert.equal(cache.reuseDistances().keys, 1, "a's key left the stack");
    group(a, 0);
    assert.equal(cache.reuseDistances().cold, 3, 'the same descriptor after destroy() is a new key');
    device.destroy();
    assert.equal(cache.reuseDistances().keys, 0, 'every key of a destroyed device leaves');
  } finally {
    cache.uninstall();
  }
});
