// Page side of the Transformers.js test app: start the module worker, show its result.
const params = new URL(location.href).searchParams;
const status = document.getElementById('status');
const worker = new Worker(new URL('worker.js', import.meta.url), { type: 'module' });
worker.addEventListener('message', (e) => {
  if (e.data.status) status.textContent = e.data.status;
  if (e.data.result) document.getElementById('result').textContent = JSON.stringify(e.data.result);
});
worker.addEventListener('error', (e) => { status.textContent = `failed: worker error ${e.message ?? ''}`; });
worker.postMessage({ tokens: Number(params.get('tokens') ?? 8) });
