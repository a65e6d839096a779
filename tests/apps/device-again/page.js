// Page script of the device-again test app (see index.html).
(async () => {
  const status = document.getElementById('status');
  const steps = Number(new URL(location.href).searchParams.get('steps') || 3);
  try {
    const first = await self.computeSteps(navigator.gpu, steps);
    const adapter = await navigator.gpu.requestAdapter();
    const lost = await adapter.requestDevice();
    lost.destroy();
    lost.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });   // used after destroy(): lost
    const second = await self.computeSteps(navigator.gpu, steps);
    document.getElementById('result').textContent = JSON.stringify({ first, second });
    status.textContent = 'done';
  } catch (err) {
    status.textContent = `failed: ${err && err.message || err}`;
  }
})();
