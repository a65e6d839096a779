// Step boundaries found in an unmodified app (--step-on), turned into `step` samples.
//
// A step is the span between two boundaries of one realm (page or worker); step 0 starts when
// the bootstrap installed the probes, before any app code, so it holds everything up to the
// first boundary (library load, pipeline creation, a decoder's prefill). Each step sample has
// the shape of web/probes/step.js's (harness/samples.py StepSample): counter deltas over the
// step, live objects at its end, its createBuffer calls by (label, usage) (`created_buffers`), cpu_ms (step start -> return of its last GPUQueue.submit, null
// when it submitted nothing) and wall_ms (step start -> boundary), token/logits_hash null, and
// extra.step_on naming the trigger. The transport adds `realm`.
//
// Between boundaries a realm with a device posts `open_step` samples (StepRecorder.openSnapshot:
// the open step's counts so far — only the counters that moved — with live objects, no new step
// number) when calls were counted since its last sample: at the end of each task that made calls
// once its open step is OPEN_STEP_MS old (at most every SNAPSHOT_MIN_MS), every OPEN_STEP_MS, and
// when the page's flush() asks every realm (bootstrap.js). So the calls of a realm that ends few
// or no steps of its own (a page doing part of the GPU work without reading anything back) reach
// the harness with the time they were made, to within a task.
//
// Triggers (spec string → boundary):
//   mapAsync      each resolved GPUBuffer.mapAsync (one per token for decoders reading logits
//                 back); the boundary runs before the app's own continuation of that promise
//   mapAsync:N    every N-th resolved mapAsync
//   mark:NAME     performance.mark(NAME) in this realm
//   console:REGEX a console.log/info/warn/error/debug call whose text matches REGEX
//   interval:MS   every MS milliseconds, in realms that created a GPUDevice

import { counts, snapshot, takeCreatedBuffers, timing, COUNTER_NAMES } from '../probes/counters.js';
import { liveSnapshot } from '../probes/live-objects.js';

/**
 * Parse a --step-on spec. Returns {kind, every?, name?, regex?, ms?, spec}.
 * Throws Error naming the valid forms on anything else.
 */
export function parseStepOn(spec = 'mapAsync') {
  const s = String(spec);
  let m;
  if (s === 'mapAsync') return { kind: 'mapAsync', every: 1, spec: s };
  if ((m = /^mapAsync:(\d+)$/.exec(s)) && Number(m[1]) >= 1) return { kind: 'mapAsync', every: Number(m[1]), spec: s };
  if ((m = /^mark:(.+)$/.exec(s))) return { kind: 'mark', name: m[1], spec: s };
  if ((m = /^console:(.+)$/.exec(s))) return { kind: 'console', regex: new RegExp(m[1]), spec: s };
  if ((m = /^interval:(\d+(?:\.\d+)?)$/.exec(s)) && Number(m[1]) > 0) return { kind: 'interval', ms: Number(m[1]), spec: s };
  throw new Error(`step-on must be mapAsync, mapAsync:N, mark:NAME, console:REGEX or interval:MS, got ${JSON.stringify(s)}`);
}

export class StepRecorder {
  /**
   * @param post function(sample)
   * @param stepOn parsed spec (parseStepOn)
   * @param emulationStats null or () => {...} of the realm's emulated devices
   * @param now () => ms (performance.now of the realm)
   */
  constructor(post, stepOn, emulationStats, now) {
    this.post = post;
    this.stepOn = stepOn;
    this.emulationStats = emulationStats;
    this.now = now;
    this.step = 0;
    this.before = snapshot();
    this.t0 = now();
    // the counters when the last step or open_step sample was posted: nothing new, nothing posted
    this.reported = this.before;
    timing.lastSubmitEndMs = null;
    takeCreatedBuffers();
  }

  /** Whether calls were counted since the last step or open_step sample. */
  changed() {
    for (const name of COUNTER_NAMES) if (counts[name] !== this.reported[name]) return true;
    return false;
  }

  /**
   * Post an `open_step` sample: the calls counted so far in the step still open (deltas since
   * its start, like a step's), without ending it. Lets the harness place the calls of a realm
   * that ends few or no steps of its own on the measured realm's steps by time. Posts nothing
   * when no call was counted since the last step or open_step sample; returns whether it posted.
   */
  openSnapshot(why) {
    if (!this.changed()) return false;
    const deltas = {};  // the counters that moved (the others are 0), to keep these samples small
    for (const name of COUNTER_NAMES) if (counts[name] !== this.before[name]) deltas[name] = counts[name] - this.before[name];
    const sample = {
      kind: 'open_step',
      step: this.step,
      wall_ms: this.now() - this.t0,
      counters: deltas,
      live: liveSnapshot(),
      extra: { why },
    };
    if (this.emulationStats) sample.emulation = this.emulationStats();
    this.reported = snapshot();
    this.post(sample);
    return true;
  }

  /** End the open step now and open the next one. Returns the sample posted. */
  boundary(trigger) {
    const t1 = this.now();
    const deltas = {};
    for (const name of COUNTER_NAMES) deltas[name] = counts[name] - this.before[name];
    const sample = {
      kind: 'step',
      step: this.step,
      token: null,
      logits_hash: null,
      cpu_ms: timing.lastSubmitEndMs === null ? null : Math.max(0, timing.lastSubmitEndMs - this.t0),
      wall_ms: t1 - this.t0,
      counters: deltas,
      live: liveSnapshot(),
      extra: { step_on: this.stepOn.spec, trigger },
      created_buffers: takeCreatedBuffers(),
    };
    if (this.emulationStats) sample.emulation = this.emulationStats();
    this.step += 1;
    this.before = snapshot();
    this.reported = this.before;
    this.t0 = t1;
    timing.lastSubmitEndMs = null;
    this.post(sample);
    return sample;
  }
}

function rewrap(proto, method, make) {
  const original = proto?.[method];
  if (typeof original !== 'function') return false;
  Object.defineProperty(proto, method, { value: make(original), writable: true, configurable: true });
  return true;
}

/**
 * Install the trigger of `recorder.stepOn` in `scope`. Must run after the counters wrapped
 * GPUBuffer.prototype.mapAsync, so this wrapper is the outer one.
 * @param hasDevice () => bool, for interval steps
 * Returns the name of what was wrapped, or null when the scope lacks it.
 */
export function installStepTrigger(scope, recorder, o, hasDevice) {
  const spec = recorder.stepOn;
  if (spec.kind === 'mapAsync') {
    let resolved = 0;
    const ok = rewrap(scope.GPUBuffer?.prototype, 'mapAsync', (inner) => function (...args) {
      const p = inner.apply(this, args);
      // Registered before the promise is returned, so it runs before the app's continuation.
      if (p && typeof p.then === 'function') {
        p.then(() => { resolved += 1; if (resolved % spec.every === 0) recorder.boundary('mapAsync'); }, () => {});
      }
      return p;
    });
    return ok ? 'GPUBuffer.mapAsync' : null;
  }
  if (spec.kind === 'mark') {
    const ok = rewrap(scope.Performance?.prototype, 'mark', (inner) => function (name, ...rest) {
      const r = inner.call(this, name, ...rest);
      if (String(name) === spec.name) recorder.boundary(`mark:${spec.name}`);
      return r;
    });
    return ok ? 'Performance.mark' : null;
  }
  if (spec.kind === 'console') {
    const c = scope.console;
    if (!c) return null;
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const inner = c[level];
      if (typeof inner !== 'function') continue;
      c[level] = function (...args) {
        const r = inner.apply(this, args);
        let text = '';
        try { text = args.map((a) => (typeof a === 'string' ? a : String(a))).join(' '); } catch { text = ''; }
        if (spec.regex.test(text)) recorder.boundary(`console.${level}`);
        return r;
      };
    }
    return 'console';
  }
  if (spec.kind === 'interval') {
    o.setInterval.call(scope, () => { if (hasDevice()) recorder.boundary('interval'); }, spec.ms);
    return 'setInterval';
  }
  return null;
}
