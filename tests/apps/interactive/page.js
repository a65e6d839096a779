// Page script of the interactive test app: the form appears after 500 ms (then #ready); each
// submit runs the number of steps typed (default 2) on a new device. What `webgpu-harness app
// --wait-for/--fill/--click` drives in the tests.
(() => {
  const status = document.getElementById('status');
  const form = document.getElementById('form');
  setTimeout(() => {
    form.hidden = false;
    const ready = document.createElement('p');
    ready.id = 'ready';
    ready.textContent = 'ready';
    document.body.append(ready);
    status.textContent = 'ready';
  }, 500);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const steps = Number(document.getElementById('steps').value) || 0;
    status.textContent = `running ${steps} steps`;
    try {
      const result = await computeSteps(navigator.gpu, steps);
      document.getElementById('result').textContent = JSON.stringify(result);
      status.textContent = result.noAdapter ? 'failed: no adapter' : 'done';
    } catch (err) {
      status.textContent = `failed: ${err && err.message || err}`;
    }
  });
})();
