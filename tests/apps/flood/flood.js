// Wraps the harness's DevTools binding before the bootstrap's first send (the bootstrap looks
// the binding up at each send: web/inject/transport.js), and floods through it with the token
// and realm of the first real batch. A test of the harness's sample limits, not an app.
(() => {
  'use strict';
  const batches = Number(new URL(location.href).searchParams.get('batches') || 200);
  let flooded = false;
  const wrap = (orig) => function (body) {
    const r = orig.call(this, body);
    if (!flooded) {
      flooded = true;
      const first = JSON.parse(body);
      const realm = first.samples[0].realm;
      let n = 1_000_000;
      for (let b = 0; b < batches; b++) {
        const samples = [];
        for (let i = 0; i < 500; i++) samples.push({ kind: 'log', message: 'flood', realm, n: n++, t_ms: performance.now() });
        orig.call(this, JSON.stringify({ token: first.token, samples }));
      }
      document.documentElement.dataset.flooded = String(batches * 500);
    }
    return r;
  };
  const orig = globalThis.__webgpuHarnessSend;  // installed before any page script (--inject cdp)
  if (typeof orig === 'function') globalThis.__webgpuHarnessSend = wrap(orig);
  document.documentElement.dataset.wrapped = String(globalThis.__webgpuHarnessSend !== orig);
})();
