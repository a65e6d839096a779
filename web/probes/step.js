// Step API: the token boundary a workload marks, turned into one `step` sample per token.
//
// beginStep(i) snapshots the counters and the clock; endStep(i, info) posts the deltas, the
// live-object counts, the step's createBuffer calls by (label, usage) (`created_buffers`,
// counters.js takeCreatedBuffers) and two times (ms, performance.now()):
//   cpu_ms  = from beginStep to the return of the step's last GPUQueue.submit (CPU time to
//             encode and submit the token's work; null when the step submitted nothing),
//   wall_ms = from beginStep to endStep (the token's sync, e.g. its mapAsync, included).

import { counts, snapshot, takeCreatedBuffers, timing, COUNTER_NAMES } from './counters.js';
import { liveSnapshot } from './live-objects.js';

// The step open now, else the step most recently begun (null before the first): where a
// device event falls (device-events.js).
let lastStep = null;
export function currentStep() {
  return lastStep;
}

export class StepProbe {
  /** @param {import('./sink.js').SampleSink} sink */
  /** @param counting false when the counters were not installed (--no-probes): steps then
   *  report counters and live objects as null (not measured), never as 0. */
  constructor(sink, emulationStats = null, counting = true) {
    this.sink = sink;
    this.counting = counting;
    this.emulationStats = emulationStats;
    this.open = null;
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
