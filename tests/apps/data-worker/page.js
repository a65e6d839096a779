// Page script of the data-worker test app: the worker's whole source is in its data: URL.
const steps = Number(new URL(location.href).searchParams.get('steps') || 8);
const compute = new URL('../shared/compute.js', location.href).href;
const source = `importScripts(${JSON.stringify(compute)});
  self.computeSteps(self.navigator.gpu, ${steps}).then(
    (result) => self.postMessage({ status: result.noAdapter ? 'failed: no adapter' : 'done', result }),
    (err) => self.postMessage({ status: 'failed: ' + (err && err.message || err) }));`;
const worker = new Worker(`data:text/javascript,${encodeURIComponent(source)}`);
worker.onmessage = (e) => {
  document.getElementById('status').textContent = e.data.status;
  if (e.data.result) document.getElementById('result').textContent = JSON.stringify(e.data.result);
};
worker.onerror = (e) => { document.getElementById('status').textContent = `failed: worker error ${e.message || ''}`; };
