// Bootstrap injected into an unmodified app: the page and every worker it starts.
//
// Bundled by esbuild into web/inject/dist/bootstrap.iife.js (`npm run build:inject`), which
// defines `WebGPUHarnessInject` (a function-scoped var). The interceptor serves it at
// /__webgpu_harness__/bootstrap.js wrapped as
//     (function __webgpuHarnessBootstrap(config, scope) { <bundle>;
//       WebGPUHarnessInject.install(config, scope, __webgpuHarnessBootstrap); })({...});
// as a classic <script> first in the page's HTML (proxy) or a Playwright init script (Chromium),
// and as the first line of every worker script (`importScripts(...)` / `import ...`, see
// workers.js), so it runs before any app code in every realm. A frame the network never serves
// (about:blank, srcdoc) is entered from its parent by calling that function again with the
// frame's global as `scope` (frames.js): a fresh copy of every probe for that realm.
//
// In each realm, in this order: emulated WebGPU where asked or where the engine has none
// (web/emulation/, as web/worker.js does), the same probes as the harness's own worker
// (web/probes/counters.js, live-objects.js), the step trigger (steps.js), the Worker wrappers
// (workers.js), the frame wrappers (frames.js, window realms), then one `env` sample. A `device`
// sample follows each GPUAdapter.requestDevice; `device_lost`/`uncaptured_error` come from
// web/probes/device-events.js; `app_error` from the realm's `error` and `unhandledrejection`
// events (the first MAX_APP_ERRORS); `open_step` (steps.js) every OPEN_STEP_MS while calls were
// counted since the last step, and when the page's flush() asks every realm over CONTROL_CHANNEL.
// Config: {stepOn, webgpu: 'auto'|'real'|'emulated', emulationOptions, probes: bool,
// wrapWorkers: bool, realm: {kind, type, wid, fid, created_url} (hints from the bootstrap URL's query)}.

import { installCounters, onAnyCall } from '../probes/counters.js';
import { installLiveObjects } from '../probes/live-objects.js';
import { installEmulatedWebGPU, emulationStats } from '../emulation/webgpu-emulated.js';
import { Transport } from './transport.js';
import { parseStepOn, StepRecorder, installStepTrigger } from './steps.js';
import { wrapWorkers } from './workers.js';
import { wrapFrames } from './frames.js';
import { installDeviceEvents } from '../probes/device-events.js';

export const GLOBAL_KEY = '__webgpuHarness';
/** ms between `open_step` samples of a realm with a device that counted calls since its last
 *  sample; also how old an open step must be before each task that made calls posts one. */
export const OPEN_STEP_MS = 100;
/** Fewest ms between two task-end `open_step` samples of one realm. */
export const SNAPSHOT_MIN_MS = 4;
/** `app_error` samples a realm posts at most (then one `log` saying the rest are not recorded). */
export const MAX_APP_ERRORS = 20;
/** BroadcastChannel on which the page's flush() asks every realm of the app for its open step. */
export const CONTROL_CHANNEL = '__webgpu_harness_control__';

function realmKind(scope) {
  if (typeof scope.ServiceWorkerGlobalScope === 'function' && scope instanceof scope.ServiceWorkerGlobalScope) return 'serviceworker';
  if (typeof scope.SharedWorkerGlobalScope === 'function' && scope instanceof scope.SharedWorkerGlobalScope) return 'sharedworker';
  if (typeof scope.DedicatedWorkerGlobalScope === 'function' && scope instanceof scope.DedicatedWorkerGlobalScope) return 'worker';
  try {
    if (scope.top !== scope) return 'frame';
  } catch { /* no top: a window of its own */ }
  return 'page';
}

function errorText(value) {
  if (value instanceof Error || (value && typeof value === 'object' && 'message' in value)) {
    return `${value.name ?? 'Error'}: ${value.message}`;
  }
  try { return String(value); } catch { return '(unprintable)'; }
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

/**
 * Install everything in realm `target` (default: the current one) once; later calls return the
 * first install. `reenter(config, scope)` is the bootstrap's own wrapper function: called with
 * a frame's global it installs a fresh copy of the probes there (frames.js).
 */
export function install(config = {}, target = undefined, reenter = null) {
  const scope = target ?? globalThis;
  if (scope[GLOBAL_KEY]) return scope[GLOBAL_KEY];
  // a new tab's initial about:blank (Chromium's init script runs there before the app's URL
  // loads): no app code runs in it, and it would count as one more page realm
  if (realmKind(scope) === 'page' && String(scope.location?.href ?? '') === 'about:blank') return null;
  // claimed first: a realm is installed once, even when a step below throws (a second install
  // would wrap the same prototypes again and count every call twice)
  const api = {};
  Object.defineProperty(scope, GLOBAL_KEY, { value: api, configurable: false, enumerable: false, writable: false });
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
    frame_id: hints.fid ?? null,
    created_url: hints.created_url ?? null,
  };
  const transport = new Transport(scope, realm, o);
  const post = (s) => transport.post(s);
  if (realm.kind === 'page') transport.listenForRelays();

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
        p.then((device) => {
          devices.push(device);
          post({ ...adapterSample(adapter, device), index: devices.length - 1 });
        }, () => {});
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
  // device losses and uncaptured errors, with the step they fell in
  try {
    installDeviceEvents(scope, { post, step: () => recorder.step });
  } catch (err) {
    post({ kind: 'log', message: `device events not installed: ${err?.message ?? err}` });
  }

  // 5. Every worker this realm starts gets the bootstrap too, and so does every frame.
  const attempt = (what, fn) => {
    try {
      return fn();
    } catch (err) {
      post({ kind: 'log', message: `${what} not installed: ${err?.message ?? err}` });
      return false;
    }
  };
  if (config.wrapWorkers !== false) attempt('worker wrappers', () => wrapWorkers(scope, post, o));
  const framesWrapped = typeof reenter === 'function' && realm.kind !== 'worker' && realm.kind !== 'sharedworker'
    && realm.kind !== 'serviceworker' && attempt('frame wrappers', () => wrapFrames(scope, {
      key: GLOBAL_KEY, post,
      enter: (win, fid) => reenter({ ...config, realm: { kind: 'frame', fid } }, win),
    }));

  // 6. The app's own failures: uncaught errors and unhandled rejections of this realm.
  let errors = 0;
  const onError = (errorKind, message, where, stack) => {
    errors += 1;
    if (errors > MAX_APP_ERRORS) {
      if (errors === MAX_APP_ERRORS + 1) post({ kind: 'log', message: `more than ${MAX_APP_ERRORS} app errors in this realm: the rest are not recorded` });
      return;
    }
    post({ kind: 'app_error', error_kind: errorKind, message: String(message).slice(0, 2000), source: where.slice(0, 500),
      stack: String(stack ?? '').slice(0, 4000), step: recorder.step });
  };
  scope.addEventListener?.('error', (e) => {
    if (e?.target && e.target !== scope) return;  // a resource that failed to load, not a script error
    const where = e.filename ? `${e.filename}:${e.lineno ?? 0}:${e.colno ?? 0}` : '';
    onError('error', e.error !== undefined && e.error !== null ? errorText(e.error) : (e.message ?? 'error'), where, e.error?.stack);
  });
  scope.addEventListener?.('unhandledrejection', (e) => onError('unhandledrejection', errorText(e.reason), '', e.reason?.stack));
  if (realm.kind === 'page') scope.addEventListener?.('pagehide', () => transport.flush());

  // 7. The open step's calls, while counted (steps.js openSnapshot), and on the page's request:
  // after each task that made calls once the open step is OPEN_STEP_MS old (a realm that ends
  // steps of its own more often than that needs none), and every OPEN_STEP_MS.
  const now = () => scope.performance.now();
  let taskTimer = null;
  let lastSnapshot = -Infinity;
  const snapshot = (why) => {
    if (!devices.length) return;
    if (recorder.openSnapshot(why)) lastSnapshot = now();
  };
  if (counting) {
    onAnyCall(() => {
      if (taskTimer !== null || !devices.length || now() - recorder.t0 < OPEN_STEP_MS) return;
      const wait = Math.max(0, lastSnapshot + SNAPSHOT_MIN_MS - now());
      taskTimer = o.setTimeout.call(scope, () => { taskTimer = null; snapshot('task'); }, wait);
    });
  }
  o.setInterval.call(scope, () => snapshot('interval'), OPEN_STEP_MS);
  let control = null;
  if (typeof o.BroadcastChannel === 'function') {
    try {
      control = new o.BroadcastChannel(CONTROL_CHANNEL);
      control.onmessage = (e) => {
        if (e.data?.webgpuHarnessFlush) {
          snapshot('flush');
          transport.flush();
        }
      };
    } catch { control = null; }
  }

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
    frame_id: realm.frame_id,
    created_url: realm.created_url,
    // performance.timeOrigin (ms since the Unix epoch): with each sample's t_ms it places this
    // realm's steps on the harness's clock (harness/store/timeline.py)
    time_origin_ms: scope.performance?.timeOrigin ?? null,
    frames_wrapped: Boolean(framesWrapped),
  });
  transport.flush();

  Object.assign(api, {
    realm,
    /** Post this realm's open step (if it counted calls), ask every other realm of the app for
     * theirs (CONTROL_CHANNEL), and send what is queued. */
    flush: () => {
      snapshot('flush');
      try { control?.postMessage({ webgpuHarnessFlush: true }); } catch { /* closed */ }
      return transport.flush();
    },
    status: () => ({ realm, steps: recorder.step, devices: devices.length, webgpu,
      sent: transport.sent, relayed: transport.relayed, failed: transport.failed, queued: transport.queue.length }),
    /** End the open step now (the harness's last step when a run ends between boundaries). */
    endStep: () => recorder.boundary('harness'),
  });
  return api;
}
