// Step API: the token boundary a workload marks, turned into one `step` sample per token.
//
// beginStep(i) snapshots the counters and the clock; endStep(i, info) posts the deltas, the
// live-object counts, the step's createBuffer calls by (label, usage) (`created_buffers`,
// counters.js takeCreatedBuffers) and two times (ms, performance.now()):
//   cpu_ms  = from beginStep to the return of the step's last GPUQueue.submit (CPU time to
//             encode and submit the token's work; null when the step submitted nothing),
//   wall_ms = from beginStep to endStep (the token's sync, e.g. its mapAsync, included).
//
// checkpoint(i), awaited by a workload right after endStep(i): under `--gc-checkpoints N` with a
// driver that can force a collection in this worker (Chromium's DevTools protocol: the harness
// says so with the cell's `gc_checkpoint_wait_s` > 0, harness/drive/runner.py), after steps
// N-1, 2N-1… it sends every sample posted so far (sink.flush(): the harness has step i) and
// waits until the harness has forced a full collection and calls GC_DONE_GLOBAL(i) in this
// worker (harness/probe/gc_checkpoints.py), or until `gc_checkpoint_wait_s` has passed: then a
// `log` sample says the checkpoint was not answered, a `heartbeat` restarts the harness's step
// timeout and the workload goes on. The step timeout cannot fire during a wait: the flushed step
// restarted it and a wait lasts at most half of it; a worker that hangs still times out. Without the wait
// the worker ran ~20 tokens ahead of what the harness had seen (steps arrive in batches,
// sink.js COALESCE_MS) and most checkpoints were missed. The wait falls between endStep(i) and
// beginStep(i+1): no step's cpu_ms or wall_ms includes it. Elsewhere it resolves at once.

import { counts, snapshot, takeCreatedBuffers, timing, COUNTER_NAMES } from './counters.js';
import { liveSnapshot } from './live-objects.js';

// The step open now, else the step most recently begun (null before the first): where a
// device event falls (device-events.js).
let lastStep = null;
export function currentStep() {
  return lastStep;
}

/** The worker global the harness calls (DevTools Runtime.evaluate) once it has forced the
 *  collection of a checkpoint: `globalThis[GC_DONE_GLOBAL](step)`. */
export const GC_DONE_GLOBAL = '__webgpuHarnessGcDone';

export class StepProbe {
  /** @param {import('./sink.js').SampleSink} sink */
  /** @param counting false when the counters were not installed (--no-probes): steps then
   *  report counters and live objects as null (not measured), never as 0.
   *  @param gc {{every?: number, waitMs?: number}} --gc-checkpoints N (`every`) and how long
   *  checkpoint() waits for the harness (ms; 0: never waits; the cell's config). */
  constructor(sink, emulationStats = null, counting = true, gc = {}) {
    this.sink = sink;
    this.counting = counting;
    this.emulationStats = emulationStats;
    this.open = null;
    this.gcEvery = Math.max(0, Math.floor(Number(gc.every) || 0));
    this.gcWaitMs = Math.max(0, Number(gc.waitMs) || 0);
    this.gcDoneUpTo = -1; // the last step the harness said its collection was done for
    this.gcWaiting = null; // {step, resolve} while checkpoint() waits
    if (this.gcEvery > 0 && this.gcWaitMs > 0) {
      globalThis[GC_DONE_GLOBAL] = (step) => this.gcDone(step);
    }
  }

  /** The harness forced the collection of the checkpoint at `step` (or a later one). */
  gcDone(step) {
    const s = Number(step);
    if (!Number.isFinite(s)) return false;
    this.gcDoneUpTo = Math.max(this.gcDoneUpTo, s);
    const w = this.gcWaiting;
    if (w && w.step <= s) {
      this.gcWaiting = null;
      w.resolve(true);
    }
    return true;
  }

  /** Call (and await) right after endStep(step): at a --gc-checkpoints checkpoint (module
   *  comment) waits until the harness forced a full collection; resolves at once elsewhere.
   *  Resolves true when the collection was done, false when there was nothing to wait for or
   *  the wait ran out (a `log` sample says so). */
  async checkpoint(step) {
    if (!(this.gcEvery > 0 && this.gcWaitMs > 0) || (step + 1) % this.gcEvery !== 0) return false;
    await this.sink.flush(); // the harness has this step: it asks for the collection now
    if (this.gcDoneUpTo >= step) return true; // answered while the flush was being answered
    const answered = await new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.gcWaiting = null;
        resolve(false);
      }, this.gcWaitMs);
      this.gcWaiting = { step, resolve: (ok) => { clearTimeout(timer); resolve(ok); } };
    });
    if (!answered) {
      this.sink.post({ kind: 'log', message: `gc checkpoint after step ${step}: the harness did not answer within `
        + `${(this.gcWaitMs / 1000).toFixed(1)} s (no forced collection known to the worker); the workload went on` });
      // the worker is alive: the time it waited does not count against the next step's timeout
      this.sink.post({ kind: 'heartbeat', what: `gc checkpoint after step ${step}: wait over, not answered` });
    }
    return answered;
  }

  beginStep(step) {
    lastStep = step;
    timing.lastSubmitEndMs = null;
    takeCreatedBuffers(); // buffers made between steps belong to no step
    this.open = { step, before: snapshot(), t0: performance.now() };
  }

  endStep(step, info = {}) {
    const t1 = performance.now();
    const open = this.open;
    if (!open || open.step !== step) {
      throw new Error(`endStep(${step}) without a matching beginStep (open: ${open?.step ?? 'none'})`);
    }
    this.open = null;
    const deltas = {};
    for (const name of COUNTER_NAMES) deltas[name] = counts[name] - open.before[name];
    const sample = {
      kind: 'step',
      step,
      token: info.token ?? null,
      logits_hash: info.logitsHash ?? null,
      cpu_ms: timing.lastSubmitEndMs === null ? null : timing.lastSubmitEndMs - open.t0,
      wall_ms: t1 - open.t0,
      counters: this.counting ? deltas : null,
      live: this.counting ? liveSnapshot() : null,
      extra: info.extra ?? {},
    };
    if (this.counting) sample.created_buffers = takeCreatedBuffers();
    if (this.emulationStats) sample.emulation = this.emulationStats();
    this.sink.post(sample);
    return sample;
  }
}
