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
    if (mode === 'sandboxed') {
      // an opaque origin: nothing reaches it from the page, and it cannot call back (it posts instead)
      iframe.setAttribute('sandbox', 'allow-scripts');
      iframe.srcdoc = `<script src="${compute}"><\/script><script>
        self.computeSteps(navigator.gpu, ${steps}).then((r) => parent.postMessage({ done: r }, '*'),
          (e) => parent.postMessage({ failed: String(e && e.message || e) }, '*'));
      <\/script>`;
      window.addEventListener('message', (e) => {
        if (e.data?.done) done(e.data.done);
        else if (e.data?.failed) status.textContent = `failed: ${e.data.failed}`;
      });
      document.getElementById('frames').appendChild(iframe);
      status.textContent = 'running';
      return;
    }
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
