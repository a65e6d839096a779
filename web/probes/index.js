// Installs every probe. Imported by the worker bootstrap before any workload code.

import { installCounters } from './counters.js';
import { installDeviceEvents } from './device-events.js';
import { installLiveObjects } from './live-objects.js';
import { currentStep } from './step.js';

export { StepProbe } from './step.js';
export { SampleSink } from './sink.js';

/**
 * Install the WebGPU probes on `scope`. With `counters: false` no WebGPU call is counted (used
 * by the probe-overhead benchmark) and steps report counters as null. With `post` (a function
 * sending one sample) device loss and uncaptured errors become samples (device-events.js),
 * counters or not: a lost device decides the cell's status.
 * Returns {installed: ["GPUDevice.createBindGroup", ...], finalizationRegistry: bool,
 * settle: () => Promise} (settle: see device-events.js; resolves at once without `post`).
 */
export function installProbes(scope = globalThis, { counters = true, post = null } = {}) {
  const events = post ? installDeviceEvents(scope, { post, step: currentStep }) : { settle: async () => {} };
  if (!counters) return { installed: [], finalizationRegistry: false, settle: events.settle };
  const installed = installCounters(scope);
  const finalizationRegistry = installLiveObjects();
  return { installed, finalizationRegistry, settle: events.settle };
}
