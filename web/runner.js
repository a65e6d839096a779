// Runner page: runs the cell's workload (in a module worker, or on this page's main thread) and
// measures page-level memory.
//
// The workload does the work and streams its own samples (web/worker.js is the bootstrap in both
// modes). The page adds:
//  - `uasm` samples from performance.measureUserAgentSpecificMemory() (cross-origin isolated
//    pages only; covers the page and its dedicated workers; Chrome resolves it eagerly with
//    --enable-blink-features=ForceEagerMeasureMemory),
//  - an `error` sample when the worker fails to load or throws outside the workload,
//  - page lifecycles: a workload may ask for the page to be reloaded or navigated away and back
//    (ctx.page.navigate); the state it hands over is kept in sessionStorage under this cell's
//    key and given back to the next load's workload, with the page-load count and the
//    Navigation Timing type of that load. The harness sees one cell throughout: the cell ends
//    only on done / error / skip, so steps keep counting across loads.
//
// URL: /web/runner.html?cell=<id>                 run the cell (first load, or a resumed one)
//      /web/runner.html?cell=<id>&away=<cycle>    the "navigated away" page of a lifecycle
//                                                 cycle: no worker, no WebGPU; it returns to the
//                                                 cell's page after the workload's `away_ms`.

import { SampleSink } from './probes/sink.js';

const params = new URL(location.href).searchParams;
const cell = params.get('cell');
// the run's token (harness/serve/access.py): every API call carries it; the worker gets it too
const token = params.get('token');
const auth = token ? { 'x-harness-token': token } : {};
document.getElementById('cell').textContent = cell;
const status = document.getElementById('status');
const sink = new SampleSink(cell, { token, prefix: 'p' });
let over = false; // the cell ended: no more page samples
const storageKey = `webgpu-harness:page:${cell}`;

/** {loads, state} stored by the previous load of this cell's page in this tab, or null. */
function stored() {
  try {
    return JSON.parse(sessionStorage.getItem(storageKey) ?? 'null');
  } catch {
    return null;
  }
}

function store(value) {
  if (value === null) sessionStorage.removeItem(storageKey);
  else sessionStorage.setItem(storageKey, JSON.stringify(value));
}

function cellUrl() {
  return `/web/runner.html?cell=${encodeURIComponent(cell)}${token ? `&token=${encodeURIComponent(token)}` : ''}`;
}

/** A message from the workload's bootstrap: {status} when the cell is over, {navigate, state}. */
function onControl(data) {
  if (data?.status) {
    status.textContent = data.status; // done / skipped / failed: this cell is over
    over = true;
    store(null);
    return;
  }
  if (data?.navigate) {
    const prev = stored() ?? { loads: 1 };
    store({ loads: prev.loads, state: data.state ?? null, pending: data.navigate });
    status.textContent = `${data.navigate}…`;
    if (data.navigate === 'reload') location.reload();
    else if (data.navigate === 'navigate') location.assign(`${cellUrl()}&away=${encodeURIComponent(prev.loads)}`);
    else sink.post({ kind: 'error', message: `runner: unknown navigation ${JSON.stringify(data.navigate)} (valid: reload, navigate)` });
  }
}

async function cellConfig() {
  const res = await fetch(`/api/cells/${encodeURIComponent(cell)}`, { headers: auth });
  if (!res.ok) throw new Error(`GET /api/cells/${cell}: HTTP ${res.status}`);
  return res.json();
}

/** The "navigated away" page: stays `away_ms`, then navigates back to the cell's page. */
async function away(cfg) {
  const ms = Number(cfg.params?.away_ms ?? 0);
  status.textContent = `away (cycle ${params.get('away')}) for ${ms} ms`;
  await sink.post({ kind: 'log', message: `runner: away page of load ${params.get('away')}, returning in ${ms} ms` });
  await new Promise((r) => setTimeout(r, ms));
  location.assign(cellUrl());
}

async function start() {
  const cfg = await cellConfig();
  if (params.has('away')) return away(cfg);
  const prev = stored();
  const nav = performance.getEntriesByType?.('navigation')?.[0]?.type ?? null;
  // A load that no workload asked for (a person re-opening the URL in the same tab) starts over.
  const resumed = prev?.pending ? prev : null;
  const page = { loads: resumed ? resumed.loads + 1 : 1, navigation_type: nav, state: resumed?.state ?? null };
  store({ loads: page.loads, state: page.state });
  status.textContent = page.loads > 1 ? `running (page load ${page.loads})` : 'running';
  if (cfg.params?.main_thread) {
    // Same bootstrap, on this page: probes installed on the page's WebGPU, then the workload.
    window.addEventListener('message', (e) => { if (e.source === window) onControl(e.data); });
    const boot = await import('./worker.js');
    boot.start(page);
    return;
  }
  const q = `cell=${encodeURIComponent(cell)}${token ? `&token=${encodeURIComponent(token)}` : ''}`
    + `&page=${encodeURIComponent(JSON.stringify(page))}`;
  const worker = new Worker(`/web/worker.js?${q}`, { type: 'module' });
  worker.addEventListener('error', (e) => {
    sink.post({ kind: 'error', message: `worker error: ${e.message || 'failed to load the worker script'}`, stack: `${e.filename || ''}:${e.lineno || ''}` });
    status.textContent = 'worker error';
  });
  worker.addEventListener('message', (e) => onControl(e.data));
}

start().catch((err) => {
  sink.post({ kind: 'error', message: `runner: ${err?.message ?? err}`, stack: String(err?.stack ?? '') });
  status.textContent = `failed: ${err?.message ?? err}`;
});

const intervalMs = Number(params.get('uasm_ms') ?? 2000);
async function measureLoop() {
  if (typeof performance.measureUserAgentSpecificMemory !== 'function' || intervalMs <= 0) return;
  while (!over) {
    try {
      const m = await performance.measureUserAgentSpecificMemory();
      if (over) return;
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
