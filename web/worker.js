// Worker bootstrap: probes first, then the workload.
//
// Started by runner.html as `new Worker('/web/worker.js?cell=<id>&token=<t>&page=<json>', {type: 'module'})`;
// `token` is the run's token from the runner page's URL (harness/serve/access.py): the config
// read and every sample post carry it.
// Static imports are evaluated before this module's body, so the probes are in place before
// the workload (or anything it loads, such as onnxruntime-web) is imported.
//
// Main-thread mode (a cell whose params set `main_thread`): the runner page imports this module
// itself and calls start(pageState); the same bootstrap then runs on the page's `window` (the
// page URL carries `cell`), with the same probes installed on the page's WebGPU prototypes.
//
// `page` is what the runner page hands over on every page load (runner.js): {loads,
// navigation_type, state}. A workload that reloads or navigates its page (lifecycle) reads it as
// ctx.page and calls ctx.page.navigate(how, state); the page stores `state` in sessionStorage
// and gives it back after the reload.
//
// Host mode (not a browser): a host that runs this bootstrap outside a browser sets
// `self.__harnessHost = {thread, env, toHost(msg)}` before importing it (web/dawn/host.js: Node on
// Dawn) and calls start() itself; `env` is added to the env sample, `thread` says where the
// workload ran, and the status messages go to `toHost` instead of a page.

import { installProbes, SampleSink, StepProbe } from './probes/index.js';

const url = new URL(self.location.href);
const cell = url.searchParams.get('cell');
const token = url.searchParams.get('token');
const sink = new SampleSink(cell, { token, prefix: 'w' });
const host = self.__harnessHost ?? null;
const isWorker = !host && typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope;
const thread = host?.thread ?? (isWorker ? 'worker' : 'main');
/** Status/control messages to the runner page: the Worker's port, the page's own window, or the host. */
const toPage = (msg) => (host ? host.toHost(msg) : isWorker ? self.postMessage(msg) : self.postMessage(msg, self.location.origin));

function errorSample(err) {
  return { kind: 'error', message: String(err?.message ?? err), stack: String(err?.stack ?? '') };
}

self.addEventListener('unhandledrejection', (e) => { sink.post(errorSample(e.reason)); });
let settleProbes = async () => {};
self.addEventListener('error', (e) => { sink.post(errorSample(e.error ?? e.message)); });

async function adapterInfo(adapter) {
  const info = adapter.info ?? (adapter.requestAdapterInfo ? await adapter.requestAdapterInfo() : {});
  const limits = {};
  for (const k in adapter.limits) limits[k] = adapter.limits[k];
  return {
    adapter: {
      vendor: info.vendor ?? '', architecture: info.architecture ?? '',
      device: info.device ?? '', description: info.description ?? '',
      is_fallback_adapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter),
    },
    features: [...adapter.features].sort(),
    limits,
  };
}

function timerResolutionUs() {
  // Smallest non-zero step of performance.now() seen over a short spin (µs). Browsers coarsen
  // the clock: 5 µs when cross-origin isolated, 100 µs otherwise (HR-Time §7, Chrome/Firefox).
  let best = Infinity;
  let last = performance.now();
  for (let i = 0; i < 20000 && best > 0.0011; i++) {
    const now = performance.now();
    if (now !== last) { best = Math.min(best, now - last); last = now; }
  }
  return Number.isFinite(best) ? Math.round(best * 1000 * 1000) / 1000 : null;
}

async function main(page) {
  const res = await fetch(`/api/cells/${encodeURIComponent(cell)}`, { headers: token ? { 'x-harness-token': token } : {} });
  if (!res.ok) throw new Error(`GET /api/cells/${cell}: HTTP ${res.status}`);
  const cfg = await res.json();
  let webgpu = 'real';
  let emulation = null;
  const devices = [];
  if (cfg.webgpu === 'emulated' || (!self.navigator.gpu && cfg.webgpu !== 'real')) {
    // No WebGPU in this engine (WebKitGTK), or asked for: install the emulated WebGPU
    // (web/emulation/) before the probes, so the probes wrap its prototypes.
    emulation = await import(cfg.emulation_module);
    // at an emulated kill-page (web/emulation/memory-budget.js) the page is gone: say so, then
    // post nothing more
    const onKillPage = (info) => {
      sink.post({ kind: 'error', message: `emulated kill-page: ${info.message}`, stack: '' });
      sink.close();
    };
    emulation.installEmulatedWebGPU(self, { ...(cfg.emulation_options ?? {}), onKillPage });
    webgpu = 'emulated';
    const requestDevice = self.GPUAdapter.prototype.requestDevice;
    self.GPUAdapter.prototype.requestDevice = async function (...args) {
      const device = await requestDevice.apply(this, args);
      devices.push(device);
      return device;
    };
  }
  const probes = installProbes(self, { counters: cfg.probes !== false, post: (sample) => sink.post(sample) });
  settleProbes = probes.settle;
  const emulationStats = emulation ? () => {
    // modeled native memory of every emulated device (web/emulation/memory-model.js)
    const out = { modeled_native_bytes: 0, modeled_buffer_bytes: 0, buffer_contents_js_bytes: 0,
      native_bind_groups_live: 0, native_bind_groups_released: 0, modeled_bytes_per_compute_bind_group: null,
      out_of_memory_errors: 0, command_buffers_rejected: 0, dispatches_dropped: 0 };
    for (const d of devices) {
      const s = emulation.emulationStats(d);
      // failure modes (web/emulation/README.md, "Failure modes"): cumulative
      out.out_of_memory_errors += s.outOfMemoryErrors ?? 0;
      out.command_buffers_rejected += s.commandBuffersRejected ?? 0;
      out.dispatches_dropped += s.dispatchesDropped ?? 0;
      out.modeled_native_bytes += s.modeledNativeBytes;
      out.modeled_buffer_bytes += s.modeledBufferBytes;
      out.buffer_contents_js_bytes += s.bufferContentsJsBytes;
      out.native_bind_groups_live += s.bindGroupsLive;
      out.native_bind_groups_released += s.bindGroupsCollected;
      out.modeled_bytes_per_compute_bind_group ??= s.model?.bytesPerComputeOnlyBindGroup ?? null;
    }
    return out;
  } : null;
  const env = {
    kind: 'env',
    user_agent: self.navigator.userAgent,
    cross_origin_isolated: Boolean(self.crossOriginIsolated),
    shared_array_buffer: typeof SharedArrayBuffer === 'function',
    timer_resolution_us: timerResolutionUs(),
    probes_installed: probes.installed,
    finalization_registry: probes.finalizationRegistry,
    webgpu,
    thread,
    // what the emulation models, each with its source (web/emulation/memory-model.js)
    ...(emulation?.modelLabels ? { emulation_models: emulation.modelLabels(cfg.emulation_options ?? {}) } : {}),
    ...(host?.env ?? {}),
    // performance.timeOrigin (ms since the Unix epoch): with each sample's t_ms it places this
    // sender's steps on the harness's clock (harness/store/timeline.py)
    time_origin_ms: performance.timeOrigin,
  };
  const gpu = self.navigator.gpu;
  if (!gpu) {
    sink.post({ ...env, webgpu: 'none' });
    sink.post({ kind: 'skip', reason: `navigator.gpu is ${gpu === null ? 'null' : 'undefined'} in this browser's worker (no WebGPU)` });
    return;
  }
  const adapter = await gpu.requestAdapter(cfg.adapter_options ?? {});
  if (!adapter) {
    sink.post({ ...env, webgpu: 'none' });
    sink.post({ kind: 'skip', reason: 'navigator.gpu.requestAdapter() returned null (no WebGPU adapter)' });
    return;
  }
  sink.post({ ...env, ...(await adapterInfo(adapter)) });
  const ctx = {
    params: cfg.params,
    adapter,
    // --gc-checkpoints: probe.checkpoint(i) waits for the harness's forced collection where the
    // driver can force one (gc_checkpoint_wait_s > 0, harness/drive/runner.py)
    probe: new StepProbe(sink, emulationStats, probes.installed.length > 0,
      { every: cfg.gc_checkpoints ?? 0, waitMs: (cfg.gc_checkpoint_wait_s ?? 0) * 1000 }),
    log: (message) => sink.post({ kind: 'log', message: String(message) }),
    // progress inside a long step or set-up: resets the harness's step timeout (a log does not)
    heartbeat: (what = '') => sink.post({ kind: 'heartbeat', what: String(what).slice(0, 200) }),
    kernelUrl: (name) => `/workloads/kernels/${name}`,
    thread,
    // 'real' or 'emulated' (web/emulation/: no kernel runs, so no result can be checked)
    webgpu,
    page: {
      ...(page ?? { loads: 1, navigation_type: null, state: null }),
      /** Ask the runner page to 'reload' or 'navigate' away and back; `state` (JSON) comes back
       *  as ctx.page.state on the next load. Never resolves: the page (and this run) ends. */
      async navigate(how, state = null) {
        await sink.flush();
        toPage({ navigate: how, state });
        return new Promise(() => {});
      },
    },
  };
  const workload = await import(cfg.entry_url);
  const result = await workload.run(ctx);
  await sink.flush();
  await sink.post({ kind: 'done', result: result ?? {} });
  toPage({ status: 'done' });
}

/** Run the cell with `page` = {loads, navigation_type, state} from the runner page (or null). */
export function start(page = null) {
  return main(page).catch(async (err) => {
    await settleProbes(); // a device loss the engine already decided is posted before this error
    const msg = String(err?.message ?? err);
    if (msg.startsWith('SKIP:')) await sink.post({ kind: 'skip', reason: msg.slice(5).trim() });
    else await sink.post(errorSample(err));
    toPage({ status: msg.startsWith('SKIP:') ? `skipped: ${msg.slice(5).trim()}` : `failed: ${msg}` });
  });
}

if (isWorker) start(JSON.parse(url.searchParams.get('page') ?? 'null'));
