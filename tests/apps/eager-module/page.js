// Page script of the eager-module test app (a file, not inline, so the app runs under a CSP
// without 'unsafe-inline').
const steps = Number(new URL(location.href).searchParams.get('steps') || 8);
const worker = new Worker(`worker.js?steps=${steps}`, { type: 'module' });
worker.onmessage = (e) => {
  document.getElementById('status').textContent = e.data.status;
  if (e.data.result) document.getElementById('result').textContent = JSON.stringify(e.data.result);
};
worker.onerror = (e) => { document.getElementById('status').textContent = `failed: worker error ${e.message || ''}`; };
