// Module worker that does no WebGPU itself: on the page's message it starts a nested classic
// worker (steps in that worker's URL) and relays what it reports.
self.onmessage = (e) => {
  const inner = new Worker(new URL(`inner.js?steps=${e.data.steps}`, import.meta.url));
  inner.onmessage = (m) => self.postMessage(m.data);
  inner.onerror = (m) => self.postMessage({ status: `failed: inner worker error ${m.message || ''}` });
};
