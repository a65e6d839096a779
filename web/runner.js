// Runner page: starts the cell's module worker and measures page-level memory.
//
// The worker does the work and streams its own samples. The page adds:
//  - `uasm` samples from performance.measureUserAgentSpecificMemory() (cross-origin isolated
//    pages only; covers the page and its dedicated workers; Chrome resolves it eagerly with
//    --enable-blink-features=ForceEagerMeasureMemory),
//  - an `error` sample when the worker fails to load or throws outside the workload.

import { SampleSink } from './probes/sink.js';

const params = new URL(location.href).searchParams;
const cell = params.get('cell');
document.getElementById('cell').textContent = cell;
const status = document.getElementById('status');
const sink = new SampleSink(cell);

const worker = new Worker(`/web/worker.js?cell=${encodeURIComponent(cell)}`, { type: 'module' });
worker.addEventListener('error', (e) => {
  sink.post({ kind: 'error', message: `worker error: ${e.message || 'failed to load the worker script'}`, stack: `${e.filename || ''}:${e.lineno || ''}` });
  status.textContent = 'worker error';
});
status.textContent = 'running';
worker.addEventListener('message', (e) => {
  if (e.data?.status) status.textContent = e.data.status;  // done / skipped / failed: this cell is over
});

const intervalMs = Number(params.get('uasm_ms') ?? 2000);
async function measureLoop() {
  if (typeof performance.measureUserAgentSpecificMemory !== 'function' || intervalMs <= 0) return;
  for (;;) {
    try {
      const m = await performance.measureUserAgentSpecificMemory();
      sink.post({
        kind: 'uasm',
        bytes: m.bytes,
        breakdown: m.breakdown.filter((b) => b.bytes > 0).map((b) => ({
          bytes: b.bytes, types: b.types, scope: b.attribution?.[0]?.scope ?? '',
        })),
      });
    } catch (err) {
      sink.post({ kind: 'log', message: `measureUserAgentSpecificMemory failed: ${err}` });
      return;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
measureLoop();
