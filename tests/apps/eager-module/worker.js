// Module worker: WebGPU compute at top level (top-level await), steps from its own URL's query.
import '../shared/compute.js';

const steps = Number(new URL(self.location.href).searchParams.get('steps') || 8);
try {
  const result = await self.computeSteps(self.navigator.gpu, steps);
  self.postMessage({ status: result.noAdapter ? 'failed: no adapter' : 'done', result });
} catch (err) {
  self.postMessage({ status: `failed: ${err?.message ?? err}` });
}
