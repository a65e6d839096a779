// Bootstrap injected into an unmodified app: the page and every worker it starts.
//
// Bundled by esbuild into web/inject/dist/bootstrap.iife.js (`npm run build:inject`), which
// defines `WebGPUHarnessInject` (a function-scoped var). The interceptor serves it at
// /__webgpu_harness__/bootstrap.js wrapped as
//     (function __webgpuHarnessBootstrap(config) { <bundle>; WebGPUHarnessInject.install(config); })({...});
// as a classic <script> first in the page's HTML (proxy) or a Playwright init script (Chromium),
// and as the first line of every worker script (`importScripts(...)` / `import ...`, see
// workers.js), so it runs before any app code in every realm.
//
// In each realm, in this order: emulated WebGPU where asked or where the engine has none
// (web/emulation/, as web/worker.js does), the same probes as the harness's own worker
// (web/probes/counters.js, live-objects.js), the step trigger (steps.js), the Worker wrappers
// (workers.js), then one `env` sample. A `device` sample follows each GPUAdapter.requestDevice.
// Config: {stepOn, webgpu: 'auto'|'real'|'emulated', emulationOptions, probes: bool,
// wrapWorkers: bool, realm: {kind, type, wid, created_url} (hints from the bootstrap URL's query)}.

import { installCounters } from '../probes/counters.js';
import { installLiveObjects } from '../probes/live-objects.js';
import { installEmulatedWebGPU, emulationStats } from '../emulation/webgpu-emulated.js';
import { Transport } from './transport.js';
import { parseStepOn, StepRecorder, installStepTrigger } from './steps.js';
import { wrapWorkers } from './workers.js';

export const GLOBAL_KEY = '__webgpuHarness';

function realmKind(scope) {
  if (typeof scope.ServiceWorkerGlobalScope === 'function' && scope instanceof scope.ServiceWorkerGlobalScope) return 'serviceworker';
  if (typeof scope.SharedWorkerGlobalScope === 'function' && scope instanceof scope.SharedWorkerGlobalScope) return 'sharedworker';
  if (typeof scope.DedicatedWorkerGlobalScope === 'function' && scope instanceof scope.DedicatedWorkerGlobalScope) return 'worker';
  return 'page';
}

function adapterSample(adapter, device) {
  const info = adapter?.info ?? {};
  return {
    kind: 'device',
    adapter: {
      vendor: info.vendor ?? '', architecture: info.architecture ?? '', device: info.device ?? '',
      description: info.description ?? '', is_fallback_adapter: Boolean(info.isFallbackAdapter ?? adapter?.isFallbackAdapter),
    },
    features: [...(device?.features ?? [])].sort(),
  };
}

/** Install everything in the current realm once; later calls return the first install. */
export function install(config = {}) {
  const scope = globalThis;
  if (scope[GLOBAL_KEY]) return scope[GLOBAL_KEY];
  const o = {
    fetch: scope.fetch, setTimeout: scope.setTimeout, clearTimeout: scope.clearTimeout,
    setInterval: scope.setInterval, BroadcastChannel: scope.BroadcastChannel,
    XMLHttpRequest: scope.XMLHttpRequest, Blob: scope.Blob, URL: scope.URL,
    createObjectURL: scope.URL?.createObjectURL, revokeObjectURL: scope.URL?.revokeObjectURL,
    // the run's token: every batch and worker registration carries it, the harness refuses
    // what does not (a page or process elsewhere on the machine cannot forge samples)
    token: String(config.token ?? ''),
  };
  const hints = config.realm ?? {};
  const realm = {
    id: Math.random().toString(16).slice(2, 10),
    kind: realmKind(scope),
    url: String(scope.location?.href ?? ''),
    script_type: hints.type ?? null,
    worker_id: hints.wid ?? null,
    created_url: hints.created_url ?? null,
  };
  const transport = new Transport(scope, realm, o);
  const post = (s) => transport.post(s);
  if (realm.kind === 'page' && scope.top === scope) transport.listenForRelays();

  // 1. Emulated WebGPU before the probes, so the probes wrap its prototypes (web/worker.js does the same).
  let webgpu = scope.navigator?.gpu ? 'real' : 'none';
  let emulation = null;
  const wanted = config.webgpu ?? 'auto';
  if (wanted === 'emulated' || (wanted === 'auto' && !scope.navigator?.gpu)) {
    try {
      emulation = installEmulatedWebGPU(scope, config.emulationOptions ?? {});
      webgpu = 'emulated';
    } catch (err) {
      post({ kind: 'log', message: `emulated WebGPU not installed: ${err?.message ?? err}` });
    }
  }

  // 2. Devices of this realm (for the `device` sample, interval steps and emulation stats).
  const devices = [];
  const adapterProto = scope.GPUAdapter?.prototype;
  if (adapterProto && typeof adapterProto.requestDevice === 'function') {
    const requestDevice = adapterProto.requestDevice;
    Object.defineProperty(adapterProto, 'requestDevice', {
      configurable: true, writable: true,
      value: function (...args) {
        const adapter = this;
        const p = requestDevice.apply(this, args);
        p.then((device) => { devices.push(device); post(adapterSample(adapter, device)); }, () => {});
        return p;
      },
    });
  }

  // 3. The harness's own probes (counters, live objects), unchanged.
  const counting = config.probes !== false;
  const installed = counting ? installCounters(scope) : [];
  const finalizationRegistry = counting ? installLiveObjects() : false;

  // 4. Steps.
  const stepOn = parseStepOn(config.stepOn ?? 'mapAsync');
  const stats = emulation ? () => {
    const out = { modeled_native_bytes: 0, native_bind_groups_live: 0, native_bind_groups_released: 0,
      out_of_memory_errors: 0, command_buffers_rejected: 0, dispatches_dropped: 0 };
    for (const d of devices) {
      const s = emulationStats(d);
      out.out_of_memory_errors += s.outOfMemoryErrors ?? 0;
      out.command_buffers_rejected += s.commandBuffersRejected ?? 0;
      out.dispatches_dropped += s.dispatchesDropped ?? 0;
      out.modeled_native_bytes += s.modeledNativeBytes;
      out.native_bind_groups_live += s.bindGroupsLive;
      out.native_bind_groups_released += s.bindGroupsCollected;
    }
    return out;
  } : null;
  const recorder = new StepRecorder(post, stepOn, stats, () => scope.performance.now());
  const trigger = installStepTrigger(scope, recorder, o, () => devices.length > 0);

  // 5. Every worker this realm starts gets the bootstrap too.
  if (config.wrapWorkers !== false) wrapWorkers(scope, post, o);

  let errors = 0;
  const onError = (what) => { if (errors++ < 20) post({ kind: 'log', message: `app ${what}` }); };
  scope.addEventListener?.('error', (e) => onError(`error: ${e.message ?? e.error ?? ''}`));
  scope.addEventListener?.('unhandledrejection', (e) => onError(`unhandled rejection: ${e.reason?.message ?? e.reason}`));
  if (realm.kind === 'page') scope.addEventListener?.('pagehide', () => transport.flush());

  post({
    kind: 'env',
    user_agent: String(scope.navigator?.userAgent ?? ''),
    webgpu,
    cross_origin_isolated: Boolean(scope.crossOriginIsolated),
    shared_array_buffer: typeof SharedArrayBuffer === 'function',
    probes_installed: installed,
    finalization_registry: finalizationRegistry,
    step_on: stepOn.spec,
    step_trigger: trigger,
    realm_kind: realm.kind,
    realm_url: realm.url,
    script_type: realm.script_type,
    worker_id: realm.worker_id,
    created_url: realm.created_url,
  });
  transport.flush();

  const api = {
    realm,
    flush: () => transport.flush(),
    status: () => ({ realm, steps: recorder.step, devices: devices.length, webgpu,
      sent: transport.sent, relayed: transport.relayed, failed: transport.failed, queued: transport.queue.length }),
    /** End the open step now (the harness's last step when a run ends between boundaries). */
    endStep: () => recorder.boundary('harness'),
  };
  Object.defineProperty(scope, GLOBAL_KEY, { value: api, configurable: false, enumerable: false, writable: false });
  return api;
}
