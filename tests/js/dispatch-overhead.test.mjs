// workloads/dispatch-overhead: option rules of the sync methods and the latency summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseOptions, MAX_SYNC_CHAIN } from '../../workloads/dispatch-overhead/options.js';
import { latencySummary, quantile } from '../../workloads/dispatch-overhead/bench.js';
import { configurations } from '../../workloads/dispatch-overhead/main.js';

test('n=0 only with sync methods; the per-dispatch methods keep their 1..65536 message', () => {
  const o = parseOptions({ n: 0, methods: 'sync-empty,sync-n', tokens: 2 });
  assert.equal(o.n, 0);
  assert.deepEqual(configurations(o).map((c) => [c.config, c.k]), [['sync-empty', 0], ['sync-n', 0]]);
  assert.throws(() => parseOptions({ n: 0 }), /n=0: must be an integer from 1 to 65536 for the methods single-op/);
  assert.throws(() => parseOptions({ n: 0, methods: 'sync-n,sequential' }), /for the methods sequential \(n=0 is valid only/);
});

test('sync options: iterations, pacing, pace_ms, main_thread; sync-n chain cap', () => {
  const o = parseOptions({ methods: 'sync-map', sync_iterations: 5, pacing: 'timeout', pace_ms: 3, main_thread: true });
  assert.deepEqual([o.syncIterations, o.pacing, o.paceMs, o.mainThread], [5, 'timeout', 3, true]);
  assert.equal(parseOptions({}).pacing, 'none');
  assert.throws(() => parseOptions({ methods: 'sync-map', pacing: 'idle' }), /pacing=idle: must be one of none, raf, timeout/);
  assert.throws(() => parseOptions({ methods: 'sync-map', sync_iterations: 0 }), /sync_iterations=0: must be an integer from 1 to 4096/);
  assert.throws(() => parseOptions({ methods: 'sync-n', n: 65536, sync_iterations: 4096 }), new RegExp(`at most ${MAX_SYNC_CHAIN}`));
  assert.equal(parseOptions({ methods: 'sync-dispatch', n: 65536, sync_iterations: 4096 }).n, 65536); // no chain of n there
});

test('latencySummary: quantiles as numpy (linear), samples in order at 0.1 µs', () => {
  assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
  assert.equal(quantile([10, 20], 0.1), 11);
  const s = latencySummary([30.04, 10, 20.26, 40]);
  assert.deepEqual([s.min, s.p10, s.median, s.mean, s.p90, s.max], [10, 13.1, 25.2, 25.1, 37, 40]);
  assert.equal(s.samples, '30,10,20.3,40');
});
