// Classic worker inside a worker: WebGPU compute (../shared/compute.js, relative to this file)
// from its first line on, steps from its own URL's query.
importScripts('../shared/compute.js');
const steps = Number(new URL(self.location.href).searchParams.get('steps') || 8);
if (!self.navigator.gpu) {
  self.postMessage({ status: 'failed: no navigator.gpu in the worker' });
} else {
  self.computeSteps(self.navigator.gpu, steps).then(
    (result) => self.postMessage({ status: result.noAdapter ? 'failed: no adapter' : 'done', result }),
    (err) => self.postMessage({ status: `failed: ${err && err.message || err}` }));
}
