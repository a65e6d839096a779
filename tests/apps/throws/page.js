// Page script of the throws test app (see index.html).
const when = new URL(location.href).searchParams.get('when') || 'start';
document.getElementById('status').textContent = `failing (${when})`;
if (when === 'device') {
  (async () => {
    const adapter = await navigator.gpu.requestAdapter();
    await adapter.requestDevice();
    const response = await fetch('no-such-model.onnx');
    if (!response.ok) throw new Error(`model failed to load: HTTP ${response.status}`);
  })();
} else {
  throw new TypeError('app failed at start: config.model is undefined');
}
