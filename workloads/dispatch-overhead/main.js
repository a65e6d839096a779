// dispatch-overhead: what one compute dispatch costs in this browser (workloads/README.md
// contract). Reproduces the methods of the dispatch-overhead paper (arXiv 2604.02344,
// shared/references.md): single-op timing overestimates the per-dispatch cost (~20x there)
// because each op pays a full sync; the sequential method (N submits, one sync, / N) gives the
// API overhead. See bench.js for what each method encodes and how it is timed.
//
// One step per method-run: step s is (round r, method configuration c) in the order
// round-major, so drift over time hits every method alike. `token` is the round; `logits_hash`
// is the FNV-1a hash of the readback, so the harness's tokens_identical check compares the
// `fresh` and `reused` cells' readbacks. A readback other than x0 + N*b fails the cell.
//
// The sync methods (sync-empty, sync-dispatch, sync-map, sync-n; bench.js runSync) time
// `sync_iterations` syncs per run; the run's step carries the distribution in its extra
// (sync_us_min/p10/median/mean/p90/max and every sample in sync_us_samples), paced back-to-back,
// by requestAnimationFrame (main thread only) or by setTimeout, in the worker or, with
// main_thread=true, on the runner page's main thread.

import { DispatchBench, expectedResult, latencySummary } from './bench.js';
import { fnv1a32Hex } from '../lib/hash.js';
import { parseOptions, SYNC_METHODS } from './options.js';

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Method configurations in run order: [{method, k, config}] ('batched' expands per K). */
export function configurations(o) {
  const out = [];
  for (const method of o.methods) {
    if (method === 'batched') {
      o.batchSizes.forEach((k, i) => out.push({ method, k, config: `batched-${o.batchLabels[i]}` }));
    } else {
      // k: dispatches per command buffer
      const k = method === 'one-pass' || method === 'sync-n' ? o.n : method === 'kernel' ? o.kernelN
        : method === 'sync-empty' || method === 'sync-map' ? 0 : 1;
      out.push({ method, k, config: method });
    }
  }
  return out;
}

/** Whether kernel-only timing can run: {available, reason}. */
function timestampSupport(o, adapter) {
  if (o.timestampQuery === 'off') return { available: false, reason: 'timestamp queries disabled by --param timestamp_query=off' };
  if (!adapter.features.has('timestamp-query')) return { available: false, reason: "the adapter does not offer the 'timestamp-query' feature" };
  return { available: true, reason: '' };
}

function sameValues(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The wait before each sync iteration: none (back-to-back), the next animation frame, or a timer. */
export function pacer(o, scope = globalThis) {
  if (o.pacing === 'raf') return () => new Promise((r) => scope.requestAnimationFrame(r));
  if (o.pacing === 'timeout') return () => new Promise((r) => scope.setTimeout(r, o.paceMs));
  return () => undefined;
}

export async function run(ctx) {
  if (ctx.adapter.info?.architecture === 'emulated') {
    // web/emulation runs no shaders: the readback that proves every dispatch ran cannot pass, and
    // per-dispatch times of a JS emulation say nothing about an engine's dispatch cost
    throw new Error('SKIP: dispatch-overhead needs a real WebGPU (its readback checks that every dispatch ran; emulated WebGPU executes no shaders)');
  }
  const o = parseOptions(ctx.params ?? {});
  const thread = ctx.thread ?? 'worker';
  if (o.pacing === 'raf' && (thread !== 'main' || typeof globalThis.requestAnimationFrame !== 'function')) {
    throw new Error('SKIP: pacing=raf paces by requestAnimationFrame, a main-thread clock: add --param main_thread=true');
  }
  const pace = pacer(o);
  const ts = timestampSupport(o, ctx.adapter);
  const wantKernel = o.methods.includes('kernel');
  const device = await ctx.adapter.requestDevice({
    label: 'dispatch-overhead',
    requiredFeatures: ts.available && wantKernel ? ['timestamp-query'] : [],
  });
  const gpuErrors = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push(String(e.error?.message ?? e.error)));
  const res = await fetch(ctx.kernelUrl('add.wgsl'));
  if (!res.ok) throw new Error(`fetch add.wgsl: HTTP ${res.status}`);
  const bench = new DispatchBench(device, await res.text(), o, ts.available && wantKernel);
  const perConfig = {};
  const syncMedians = {};
  const kernelUs = [];
  let kernelQuantumUs = null;
  try {
    await bench.init();
    if (wantKernel && !ts.available) ctx.log(`kernel-only time n/a: ${ts.reason}`);
    const configs = configurations(o).filter((c) => c.method !== 'kernel' || ts.available);
    let step = 0;
    for (let r = 0; r < o.rounds; r++) {
      for (const c of configs) {
        const n = c.method === 'kernel' ? o.kernelN : o.n;
        bench.reset();
        // eslint-disable-next-line no-await-in-loop
        await device.queue.onSubmittedWorkDone(); // the queue is idle when the step starts
        ctx.probe.beginStep(step);
        let out;
        const extra = { method: c.method, config: c.config, k: c.k, n, round: r, bind_groups: o.variant };
        if (SYNC_METHODS.includes(c.method)) {
          // eslint-disable-next-line no-await-in-loop
          out = await bench.runSync(c.method, n, o.syncIterations, pace);
          const lat = latencySummary(out.samplesUs);
          Object.assign(extra, {
            iterations: o.syncIterations, pacing: o.pacing, pace_ms: o.pacing === 'timeout' ? o.paceMs : 0, thread,
            sync_us_min: lat.min, sync_us_p10: lat.p10, sync_us_median: lat.median, sync_us_mean: lat.mean,
            sync_us_p90: lat.p90, sync_us_max: lat.max, sync_us_samples: lat.samples,
          });
          (syncMedians[c.config] ??= []).push(lat.median);
        } else if (c.method === 'phases') {
          // eslint-disable-next-line no-await-in-loop
          out = await bench.runPhases(n);
          let sum = 0;
          for (const [phase, ms] of Object.entries(out.phasesMs)) {
            const us = (ms * 1000) / n;
            extra[`phase_${phase}_us`] = us;
            sum += us;
          }
          extra.phases_sum_us = sum;
          extra.us_per_dispatch = (out.wallMs * 1000) / n;
        } else if (c.method === 'kernel') {
          // eslint-disable-next-line no-await-in-loop
          out = await bench.runKernelTimestamps(n);
          const mean = out.kernelNs.reduce((a, b) => a + b, 0) / out.kernelNs.length / 1000;
          extra.kernel_us_per_dispatch = mean;
          extra.kernel_quantum_us = out.quantumNs === null ? null : out.quantumNs / 1000;
          kernelUs.push(mean);
          kernelQuantumUs = extra.kernel_quantum_us;
        } else {
          // eslint-disable-next-line no-await-in-loop
          out = await bench.runMethod(c.method, n, c.k);
          extra.us_per_dispatch = (out.wallMs * 1000) / n;
          if (out.cpuMs !== null) extra.cpu_us_per_dispatch = (out.cpuMs * 1000) / n;
        }
        const want = expectedResult(o.elements, out.chain ?? n);
        const ok = sameValues(out.result, want);
        Object.assign(extra, {
          expected_submits: out.expected.submits,
          expected_command_encoders: out.expected.commandEncoders,
          expected_dispatches: out.expected.dispatches,
          expected_bind_groups: out.expected.bindGroups,
          expected_map_async: out.expected.mapAsync,
          readback_ok: ok ? 1 : 0,
        });
        ctx.probe.endStep(step, { token: r, logitsHash: fnv1a32Hex(out.result), extra });
        if (!ok) throw new Error(`${c.config} round ${r}: readback is not x0 + ${out.chain ?? n}*b (first values ${[...out.result.slice(0, 4)]}, expected ${[...want.slice(0, 4)]})`);
        if (gpuErrors.length) throw new Error(`WebGPU error: ${gpuErrors.join('; ')}`);
        if (extra.us_per_dispatch !== undefined) (perConfig[c.config] ??= []).push(extra.us_per_dispatch);
        step += 1;
      }
    }
  } finally {
    bench.destroy();
    device.destroy();
  }
  // Round 0 warms caches (pipelines, allocator); medians use later rounds when there are any.
  const med = (xs) => median(xs.length > 1 ? xs.slice(1) : xs);
  const medians = Object.fromEntries(Object.entries(perConfig).map(([k, v]) => [k, med(v)]));
  return {
    workload: 'dispatch-overhead',
    variant: o.variant,
    n: o.n,
    rounds: o.rounds,
    elements: o.elements,
    batched_pass: o.batchedPass,
    single_op_sync: o.singleOpSync,
    us_per_dispatch_median: medians,
    overestimation_factor: medians['single-op'] && medians.sequential ? medians['single-op'] / medians.sequential : null,
    thread,
    pacing: o.pacing,
    sync_iterations: o.syncIterations,
    sync_us_median: Object.fromEntries(Object.entries(syncMedians).map(([k, v]) => [k, med(v)])),
    kernel_only: {
      available: ts.available && wantKernel,
      reason: wantKernel ? ts.reason : 'kernel method not requested',
      us_per_dispatch_median: med(kernelUs),
      quantum_us: kernelQuantumUs,
      dispatches: o.kernelN,
    },
    expected_readback_hash: fnv1a32Hex(expectedResult(o.elements, o.n)),
  };
}
