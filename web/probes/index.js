// Installs every probe. Imported by the worker bootstrap before any workload code.

import { installCounters } from './counters.js';
import { installLiveObjects } from './live-objects.js';

export { StepProbe } from './step.js';
export { SampleSink } from './sink.js';

/**
 * Install the WebGPU probes on `scope`. With `counters: false` nothing is wrapped (used by the
 * probe-overhead benchmark), and steps report zero counts.
 * Returns {installed: ["GPUDevice.createBindGroup", ...], finalizationRegistry: bool}.
 */
export function installProbes(scope = globalThis, { counters = true } = {}) {
  if (!counters) return { installed: [], finalizationRegistry: false };
  const installed = installCounters(scope);
  const finalizationRegistry = installLiveObjects();
  return { installed, finalizationRegistry };
}
