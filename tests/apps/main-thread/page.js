// Page script of the main-thread test app (a file, not inline, so the app runs under a CSP
// without 'unsafe-inline').
(async () => {
  const status = document.getElementById('status');
  const steps = Number(new URL(location.href).searchParams.get('steps') || 8);
  try {
    if (!navigator.gpu) { status.textContent = 'failed: no navigator.gpu'; return; }
    status.textContent = 'running';
    const result = await computeSteps(navigator.gpu, steps);
    document.getElementById('result').textContent = JSON.stringify(result);
    status.textContent = result.noAdapter ? 'failed: no adapter' : 'done';
  } catch (err) {
    status.textContent = `failed: ${err && err.message || err}`;
  }
})();
