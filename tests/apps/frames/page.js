// Page script of the frames test app (see index.html): the GPU work runs in a frame's realm.
(async () => {
  const status = document.getElementById('status');
  const params = new URL(location.href).searchParams;
  const steps = Number(params.get('steps') || 8);
  const mode = params.get('mode') || 'blank';
  const compute = new URL('../shared/compute.js', location.href).href;
  const done = (result) => {
    document.getElementById('result').textContent = JSON.stringify(result);
    status.textContent = result.noAdapter ? 'failed: no adapter' : 'done';
  };
  // a frame's scripts report back through this
  window.frameDone = done;
  window.frameFailed = (message) => { status.textContent = `failed: ${message}`; };
  const inner = `<script src="${compute}"><\/script><script>
    self.computeSteps(navigator.gpu, ${steps}).then((r) => parent.frameDone(r), (e) => parent.frameFailed(String(e && e.message || e)));
  <\/script>`;
  try {
    const iframe = document.createElement('iframe');
    if (mode === 'srcdoc') {
      iframe.srcdoc = inner;
      document.getElementById('frames').appendChild(iframe);
      status.textContent = 'running';
      return;
    }
    document.getElementById('frames').appendChild(iframe);
    if (mode === 'write') {
      const doc = iframe.contentDocument;
      doc.open();
      doc.write(inner);
      doc.close();
      status.textContent = 'running';
      return;
    }
    const gpu = iframe.contentWindow.navigator.gpu;
    if (!gpu) { status.textContent = 'failed: no navigator.gpu in the frame'; return; }
    status.textContent = 'running';
    done(await self.computeSteps(gpu, steps));
  } catch (err) {
    status.textContent = `failed: ${err && err.message || err}`;
  }
})();
