// webgpu-emulated.js: a JavaScript WebGPU (compute subset) with a modeled native-memory
// ledger, for browsers without WebGPU (WebKitGTK/WPE) where we still want to study how
// the JS garbage collector paces the release of per-dispatch GPUBindGroups.
//
// Why: onnxruntime-web's WebGPU EP creates a new GPUBindGroup per dispatch (~300 per
// token); in WebKit a bind group's native memory (one MTLBuffer per shader stage with
// bindings) is freed only when its JS wrapper is collected, and the wrapper reports no
// extra cost to JavaScriptCore, so the memory piles up (~150,000 bind groups, 2,048 MB,
// iOS kill). See /work/shared/references.md (microsoft/onnxruntime #33750; WebKit
// Source/WebGPU/WebGPU/BindGroup.mm; "WebKitGTK/WPE have none").
//
// What it is: real classes named like the WebGPU interfaces (GPU, GPUAdapter, GPUDevice,
// GPUQueue, GPUBuffer, GPUBindGroup, ...) so probes can wrap e.g.
// GPUDevice.prototype.createBindGroup. It runs no shaders: buffers keep what was written
// or copied into them; dispatches leave buffers untouched. It validates where cheap, as
// the WebGPU spec says (gpuweb/gpuweb spec/index.bs): errors go to error scopes or fire
// `uncapturederror`, failed creates return invalid objects. Adapter limits are the spec's
// defaults (§3.6.2 "Limits", see internals.js).
//
// Memory model (memory-model.js has the formula): each valid bind group is charged
//   sum over shader stages with bindings of max(bytesPerStage, roundUp(8 * bindings, pageBytes))
// (defaults bytesPerStage = pageBytes = 16384, so a compute-only bind group costs 16 KiB),
// released only when its wrapper has been collected (FinalizationRegistry) AND no
// recorded or in-flight command list still uses it. Buffers are charged their size.
//
// Public API:
//   installEmulatedWebGPU(globalObj = globalThis, options = {}) -> {gpu, classes, uninstall()}
//     Defines the GPU* classes and constants on globalObj and navigator.gpu = gpu.
//   createEmulatedGPU(options = {}) -> GPU          (no globals touched)
//   emulationStats(device) -> {bindGroupsCreated, bindGroupsCollected, bindGroupsLive,
//     modeledNativeBytes, buffersLiveBytes, modeledBufferBytes, ..., model: {...},
//     memoryBudget: {budgetBytes, atBudget, trips, killed} | null, lost}
//   completeSubmittedWork(device)                   (finish all submitted work now)
//   modelLabels(options) -> [string]                (what is modeled, each with its source)
//   device.__harnessLedger                          (the live Ledger object)
// Options:
//   bytesPerStage, pageBytes, argumentBytes, reportCostToJs (memory model, memory-model.js)
//   limits: adapter limits: undefined (spec defaults), a preset name ('spec-default',
//     'webkit-apple7': WebKit's Metal limits on an A14+ GPU, see internals.js; what
//     onnxruntime-web's C++ EP needs, since some of its kernels bind 9+ storage buffers),
//     or {name: value} over the defaults
//   features: adapter feature names (default ['shader-f16']); adapterInfo: fields
//     overriding GPUAdapterInfo
//   completion: 'task' (default: submitted work is done in a later task) | 'microtask' |
//     number of ms | {delayMs} | 'manual' (only completeSubmittedWork() completes it)
//   contents: 'lazy' (default: a buffer gets an ArrayBuffer on first write) | 'none'
//     (keep no bytes at all: reads return zeros; no JS memory per GPU buffer)
//   logUncapturedErrors: console.warn errors nobody captured (default true)
//   retainWrappersUntilDone: command lists also keep the GPUBindGroup JS wrappers alive
//     until their work is done (default false: engines keep only the native object)
//   memoryBudgetBytes, atMemoryBudget ('lose-device' | 'kill-page' | 'out-of-memory'), onKillPage:
//     the page's memory budget over modeled bind group + buffer bytes (memory-budget.js;
//     'out-of-memory' refuses createBuffer past it and lets the page live: a failure model)
//   encoderRetainsBindGroups, bufferRecordsEncoders, encoderRecordBytes: optional models of
//     older WebKit behaviour (memory-model.js, WEBKIT_MODELS); limits 'ios-2025' (maxBufferSize
//     1 GiB) vs 'webkit-apple7' / 'ios-2024' (256 MiB): internals.js

import {
  INTERNAL, CONSTRUCT, DEFAULT_LIMITS, ALIGNMENT_LIMITS, LIMIT_PRESETS, GPUBufferUsageFlags, GPUMapModeFlags,
  GPUShaderStageFlags, GPUTextureUsageFlags, illegalConstructor, native, domException, defineLabel,
  afterTask, makeNative,
} from './internals.js';
import {
  GPUError, GPUValidationError, GPUOutOfMemoryError, GPUInternalError, GPUPipelineError,
  GPUUncapturedErrorEvent, GPUDeviceLostInfo, GPUCompilationInfo, GPUCompilationMessage,
  pushErrorScope, popErrorScope,
} from './errors.js';
import {
  GPUBuffer, GPUShaderModule, GPUBindGroupLayout, GPUPipelineLayout, GPUBindGroup, GPUComputePipeline,
  GPUQuerySet, createBuffer, createShaderModule, createBindGroupLayout, createPipelineLayout,
  createBindGroup, createComputePipeline, createComputePipelineAsync, createQuerySet, destroyBufferNative,
} from './resources.js';
import {
  GPUCommandEncoder, GPUComputePassEncoder, GPUCommandBuffer, GPUQueue, NativeQueue, createCommandEncoder,
} from './commands.js';
import { resolveModel, Ledger } from './memory-model.js';
import { MemoryBudget } from './memory-budget.js';

// ---------------------------------------------------------------------------------------
// Set-likes and limits

function defineSetLike(Class) {
  const p = Class.prototype;
  const set = (o) => o[INTERNAL].set;
  Object.defineProperties(p, {
    size: { get() { return set(this).size; }, enumerable: true, configurable: true },
    has: { value(k) { return set(this).has(k); }, writable: true, configurable: true },
    keys: { value() { return set(this).values(); }, writable: true, configurable: true },
    values: { value() { return set(this).values(); }, writable: true, configurable: true },
    entries: { value() { return set(this).entries(); }, writable: true, configurable: true },
    forEach: {
      value(cb, thisArg) { for (const v of set(this)) cb.call(thisArg, v, v, this); },
      writable: true, configurable: true,
    },
    [Symbol.iterator]: { value() { return set(this).values(); }, writable: true, configurable: true },
  });
}

export class GPUSupportedFeatures {
  constructor(token, names) { illegalConstructor(token); this[INTERNAL] = { set: new Set(names) }; }
}
defineSetLike(GPUSupportedFeatures);

export class WGSLLanguageFeatures {
  constructor(token, names) { illegalConstructor(token); this[INTERNAL] = { set: new Set(names) }; }
}
defineSetLike(WGSLLanguageFeatures);

export class GPUSupportedLimits {
  constructor(token, values) { illegalConstructor(token); this[INTERNAL] = Object.freeze({ ...values }); }
}
for (const name of Object.keys(DEFAULT_LIMITS)) {
  Object.defineProperty(GPUSupportedLimits.prototype, name, {
    get() { return this[INTERNAL][name]; }, enumerable: true, configurable: true,
  });
}

export class GPUAdapterInfo {
  constructor(token, info) { illegalConstructor(token); this[INTERNAL] = Object.freeze({ ...info }); }
}
for (const name of ['vendor', 'architecture', 'device', 'description', 'subgroupMinSize', 'subgroupMaxSize', 'isFallbackAdapter']) {
  Object.defineProperty(GPUAdapterInfo.prototype, name, {
    get() { return this[INTERNAL][name]; }, enumerable: true, configurable: true,
  });
}

const ADAPTER_INFO = {
  vendor: 'webgpu-harness',
  architecture: 'emulated',
  device: '',
  description: 'emulated WebGPU (modeled native memory)',
  subgroupMinSize: 4,
  subgroupMaxSize: 128,
  isFallbackAdapter: false,
};
const WGSL_FEATURES = ['readonly_and_readwrite_storage_textures', 'packed_4x8_integer_dot_product',
  'unrestricted_pointer_parameters', 'pointer_composite_access'];

/** options.limits: undefined, a preset name (LIMIT_PRESETS) or {name: value} over the defaults. */
function resolveLimits(spec) {
  if (spec === undefined || spec === null) return { ...DEFAULT_LIMITS };
  if (typeof spec === 'string') {
    if (!LIMIT_PRESETS[spec]) throw new TypeError(`limits: unknown preset '${spec}' (${Object.keys(LIMIT_PRESETS).join(', ')})`);
    return { ...LIMIT_PRESETS[spec] };
  }
  for (const key of Object.keys(spec)) if (!(key in DEFAULT_LIMITS)) throw new TypeError(`limits: unknown limit '${key}'`);
  return { ...DEFAULT_LIMITS, ...spec };
}

// ---------------------------------------------------------------------------------------
// GPU / GPUAdapter

export class GPU {
  constructor(token, options) {
    illegalConstructor(token);
    this[INTERNAL] = {
      kind: 'gpu', options, wgsl: new WGSLLanguageFeatures(CONSTRUCT, WGSL_FEATURES),
      budget: MemoryBudget.from(options, loseDevice), // one page: every device of this GPU
    };
  }
  requestAdapter(options = {}) {
    const g = native(this, 'gpu');
    void options;
    return new Promise((resolve) => afterTask(() => resolve(new GPUAdapter(CONSTRUCT, g.options, g.budget))));
  }
  getPreferredCanvasFormat() { return 'bgra8unorm'; }
  get wgslLanguageFeatures() { return native(this, 'gpu').wgsl; }
}

export class GPUAdapter {
  constructor(token, options, budget = null) {
    illegalConstructor(token);
    const limits = resolveLimits(options.limits);
    const features = new Set(options.features ?? ['shader-f16']);
    this[INTERNAL] = {
      kind: 'adapter',
      options,
      budget,
      consumed: false,
      limitValues: limits,
      features: new GPUSupportedFeatures(CONSTRUCT, features),
      limits: new GPUSupportedLimits(CONSTRUCT, limits),
      info: new GPUAdapterInfo(CONSTRUCT, { ...ADAPTER_INFO, ...(options.adapterInfo || {}) }),
    };
  }
  get features() { return native(this, 'adapter').features; }
  get limits() { return native(this, 'adapter').limits; }
  get info() { return native(this, 'adapter').info; }

  requestDevice(descriptor = {}) {
    const a = native(this, 'adapter');
    const desc = descriptor ?? {};
    return new Promise((resolve, reject) => afterTask(() => {
      const required = [...(desc.requiredFeatures ?? [])].map(String);
      for (const f of required) {
        if (!a.features.has(f)) { reject(new TypeError(`requestDevice: feature '${f}' is not supported by the adapter`)); return; }
      }
      if (a.consumed) { reject(domException('OperationError', 'requestDevice: the adapter was already consumed')); return; }
      const limits = { ...DEFAULT_LIMITS };
      for (const [key, value] of Object.entries(desc.requiredLimits ?? {})) {
        if (value === undefined) continue;
        if (!(key in DEFAULT_LIMITS)) { reject(domException('OperationError', `requestDevice: unknown limit '${key}'`)); return; }
        const v = Number(value);
        const adapterValue = a.limitValues[key];
        if (ALIGNMENT_LIMITS.has(key)) {
          if (v < adapterValue || (v & (v - 1)) !== 0) { reject(domException('OperationError', `requestDevice: ${key}=${v} is not supported`)); return; }
          limits[key] = Math.min(limits[key], v);
        } else {
          if (v > adapterValue) { reject(domException('OperationError', `requestDevice: ${key}=${v} exceeds the adapter limit ${adapterValue}`)); return; }
          limits[key] = Math.max(limits[key], v);
        }
      }
      a.consumed = true;
      resolve(new GPUDevice(CONSTRUCT, a, desc, limits, new Set(required)));
    }));
  }
}

// ---------------------------------------------------------------------------------------
// GPUDevice

const EventTargetBase = typeof EventTarget === 'function' ? EventTarget : class {};

export class GPUDevice extends EventTargetBase {
  constructor(token, adapter, desc, limits, features) {
    illegalConstructor(token);
    super();
    const options = adapter.options;
    const model = resolveModel(options);
    const dev = makeNative('device', null, desc.label);
    dev.options = options;
    dev.model = model;
    dev.ledger = new Ledger(model);
    dev.limits = Object.freeze(limits);
    dev.features = features;
    dev.errorScopes = [];
    dev.lost = false;
    dev.eventTarget = this;
    dev.liveBuffers = new Set();
    dev.adapterInfo = adapter.info;
    dev.featuresObject = new GPUSupportedFeatures(CONSTRUCT, features);
    dev.limitsObject = new GPUSupportedLimits(CONSTRUCT, limits);
    dev.queue = new NativeQueue(dev);
    dev.queueWrapper = new GPUQueue(CONSTRUCT, dev.queue);
    dev.queue.label = desc.defaultQueue?.label ?? '';
    dev.lostPromise = new Promise((resolve) => { dev.resolveLost = resolve; });
    dev.onuncapturederror = null;
    dev.budget = adapter.budget;
    dev.budget?.register(dev);
    this[INTERNAL] = dev;
  }

  get features() { return native(this, 'device').featuresObject; }
  get limits() { return native(this, 'device').limitsObject; }
  get adapterInfo() { return native(this, 'device').adapterInfo; }
  get queue() { return native(this, 'device').queueWrapper; }
  get lost() { return native(this, 'device').lostPromise; }

  get onuncapturederror() { return native(this, 'device').onuncapturederror; }
  set onuncapturederror(handler) {
    const dev = native(this, 'device');
    if (dev.onuncapturederrorListener) this.removeEventListener('uncapturederror', dev.onuncapturederrorListener);
    dev.onuncapturederror = typeof handler === 'function' ? handler : null;
    dev.onuncapturederrorListener = null;
    if (dev.onuncapturederror) {
      dev.onuncapturederrorListener = (e) => dev.onuncapturederror.call(this, e);
      this.addEventListener('uncapturederror', dev.onuncapturederrorListener);
    }
  }

  /** The live memory ledger (harness hook; not part of WebGPU). */
  get __harnessLedger() { return native(this, 'device').ledger; }

  destroy() {
    loseDevice(native(this, 'device'), 'destroyed', 'device.destroy() was called');
  }

  createBuffer(descriptor) { return createBuffer(native(this, 'device'), descriptor); }
  createShaderModule(descriptor) { return createShaderModule(native(this, 'device'), descriptor); }
  createBindGroupLayout(descriptor) { return createBindGroupLayout(native(this, 'device'), descriptor); }
  createPipelineLayout(descriptor) { return createPipelineLayout(native(this, 'device'), descriptor); }
  createBindGroup(descriptor) { return createBindGroup(native(this, 'device'), descriptor); }
  createComputePipeline(descriptor) { return createComputePipeline(native(this, 'device'), descriptor); }
  createComputePipelineAsync(descriptor) { return createComputePipelineAsync(native(this, 'device'), descriptor); }
  createCommandEncoder(descriptor = {}) { return createCommandEncoder(native(this, 'device'), descriptor); }
  createQuerySet(descriptor) { return createQuerySet(native(this, 'device'), descriptor); }
  pushErrorScope(filter) { pushErrorScope(native(this, 'device'), String(filter)); }
  popErrorScope() {
    let dev;
    try { dev = native(this, 'device'); } catch (e) { return Promise.reject(e); }
    return popErrorScope(dev);
  }

  createTexture() { throw notEmulated('createTexture'); }
  createSampler() { throw notEmulated('createSampler'); }
  importExternalTexture() { throw notEmulated('importExternalTexture'); }
  createRenderPipeline() { throw notEmulated('createRenderPipeline'); }
  createRenderPipelineAsync() { return Promise.reject(notEmulated('createRenderPipelineAsync')); }
  createRenderBundleEncoder() { throw notEmulated('createRenderBundleEncoder'); }
}
defineLabel(GPUDevice);

/**
 * Lose device native `dev`: destroy its buffers (their memory goes), complete its submitted
 * work, and resolve device.lost in a later task with GPUDeviceLostInfo {reason, message}
 * (reason 'destroyed' for destroy(), 'unknown' otherwise; null: never resolve, for a page
 * killed at its memory budget, memory-budget.js). A device already lost is left as it is.
 */
function loseDevice(dev, reason, message) {
  if (dev.lost) return;
  for (const b of [...dev.liveBuffers]) destroyBufferNative(b);
  dev.queue.completeUpTo(dev.queue.submitted);
  dev.lost = true;
  if (reason === null) return;
  const info = new GPUDeviceLostInfo(INTERNAL, reason, message);
  afterTask(() => dev.resolveLost(info));
}

function notEmulated(what) {
  return domException('NotSupportedError', `webgpu-emulated: ${what} is not emulated (compute subset only)`);
}

// ---------------------------------------------------------------------------------------
// Public helpers

export { DEFAULT_LIMITS, LIMIT_PRESETS };

export function createEmulatedGPU(options = {}) {
  resolveModel(options); // validate early
  resolveLimits(options.limits);
  MemoryBudget.from(options, loseDevice);
  return new GPU(CONSTRUCT, { ...options });
}

/**
 * What the emulation models under `options`, each label naming its source: the WebKit
 * behaviour models and the failure models in effect (memory-model.js WEBKIT_MODELS,
 * FAILURE_MODELS), plus the bind-group memory model's source. Throws on bad options.
 */
export function modelLabels(options = {}) {
  const m = resolveModel(options);
  return [`bind-group memory: ${m.source}`, ...m.webkitModels, ...m.failureModels];
}

export function emulationStats(device) {
  const dev = native(device, 'device');
  return { ...dev.ledger.snapshot(), memoryBudget: dev.budget ? dev.budget.snapshot() : null, lost: dev.lost };
}

export function completeSubmittedWork(device) {
  const dev = native(device, 'device');
  dev.queue.completeUpTo(dev.queue.submitted);
}

export const classes = Object.freeze({
  GPU, GPUAdapter, GPUAdapterInfo, GPUSupportedLimits, GPUSupportedFeatures, WGSLLanguageFeatures,
  GPUDevice, GPUQueue, GPUBuffer, GPUShaderModule, GPUCompilationInfo, GPUCompilationMessage,
  GPUComputePipeline, GPUBindGroupLayout, GPUPipelineLayout, GPUBindGroup, GPUCommandEncoder,
  GPUComputePassEncoder, GPUCommandBuffer, GPUQuerySet, GPUError, GPUValidationError,
  GPUOutOfMemoryError, GPUInternalError, GPUPipelineError, GPUUncapturedErrorEvent, GPUDeviceLostInfo,
});
const CONSTANTS = {
  GPUBufferUsage: GPUBufferUsageFlags, GPUMapMode: GPUMapModeFlags,
  GPUShaderStage: GPUShaderStageFlags, GPUTextureUsage: GPUTextureUsageFlags,
};

/**
 * Install the emulation on `globalObj` (a window or worker global): the GPU* classes
 * (replacing any real ones, so probes wrap these prototypes), the GPUBufferUsage/
 * GPUMapMode/GPUShaderStage/GPUTextureUsage constants when absent, and navigator.gpu.
 * Install before anything captures navigator.gpu or the prototypes.
 */
export function installEmulatedWebGPU(globalObj = globalThis, options = {}) {
  const gpu = createEmulatedGPU(options);
  const restore = [];
  const define = (obj, name, value) => {
    const previous = Object.getOwnPropertyDescriptor(obj, name);
    restore.push(() => {
      if (previous) Object.defineProperty(obj, name, previous);
      else delete obj[name];
    });
    Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
  };
  for (const [name, value] of Object.entries(classes)) define(globalObj, name, value);
  for (const [name, value] of Object.entries(CONSTANTS)) if (globalObj[name] === undefined) define(globalObj, name, value);
  if (globalObj.navigator && (typeof globalObj.navigator === 'object' || typeof globalObj.navigator === 'function')) {
    define(globalObj.navigator, 'gpu', gpu);
  } else {
    define(globalObj, 'navigator', { gpu });
  }
  return {
    gpu,
    classes,
    uninstall() { while (restore.length) restore.pop()(); },
  };
}
