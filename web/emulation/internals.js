// internals.js: shared constants and helpers of the emulated WebGPU.
//
// Sources: WebGPU spec (gpuweb/gpuweb spec/index.bs): §3.6.2 "Limits" (#limits) for
// DEFAULT_LIMITS (the "Default" column, not the compatibility-mode one); "GPUBufferUsage"
// (#buffer-usage), "GPUMapMode" (#typedefdef-gpumapmodeflags), "GPUShaderStage"
// (#typedefdef-gpushaderstageflags) and "GPUTextureUsage" for the flag values.
//
// Every emulated object is a small JS wrapper whose state lives in `wrapper[INTERNAL]`
// (the "native" record). Native records never point back at wrappers, so a wrapper's
// lifetime follows only the references user code (and the JS engine) keep to it.

export const INTERNAL = Symbol('webgpu-emulated.internal');
export const CONSTRUCT = Symbol('webgpu-emulated.construct');

export const GPUBufferUsageFlags = Object.freeze({
  MAP_READ: 0x0001, MAP_WRITE: 0x0002, COPY_SRC: 0x0004, COPY_DST: 0x0008, INDEX: 0x0010,
  VERTEX: 0x0020, UNIFORM: 0x0040, STORAGE: 0x0080, INDIRECT: 0x0100, QUERY_RESOLVE: 0x0200,
});
export const GPUMapModeFlags = Object.freeze({ READ: 0x0001, WRITE: 0x0002 });
export const GPUShaderStageFlags = Object.freeze({ VERTEX: 0x1, FRAGMENT: 0x2, COMPUTE: 0x4 });
export const GPUTextureUsageFlags = Object.freeze({
  COPY_SRC: 0x01, COPY_DST: 0x02, TEXTURE_BINDING: 0x04, STORAGE_BINDING: 0x08, RENDER_ATTACHMENT: 0x10,
});
export const ALL_BUFFER_USAGE = 0x03ff;

/** WebGPU spec §3.6.2 "Limits", Default column (core, not compatibility mode). */
export const DEFAULT_LIMITS = Object.freeze({
  maxTextureDimension1D: 8192,
  maxTextureDimension2D: 8192,
  maxTextureDimension3D: 2048,
  maxTextureArrayLayers: 256,
  maxBindGroups: 4,
  maxBindGroupsPlusVertexBuffers: 24,
  maxImmediateSize: 64,
  maxBindingsPerBindGroup: 1000,
  maxDynamicUniformBuffersPerPipelineLayout: 8,
  maxDynamicStorageBuffersPerPipelineLayout: 4,
  maxSampledTexturesPerShaderStage: 16,
  maxSamplersPerShaderStage: 16,
  maxStorageBuffersPerShaderStage: 8,
  maxStorageBuffersInVertexStage: 8,
  maxStorageBuffersInFragmentStage: 8,
  maxStorageTexturesPerShaderStage: 4,
  maxStorageTexturesInVertexStage: 4,
  maxStorageTexturesInFragmentStage: 4,
  maxUniformBuffersPerShaderStage: 12,
  maxUniformBufferBindingSize: 65536,
  maxStorageBufferBindingSize: 134217728,
  minUniformBufferOffsetAlignment: 256,
  minStorageBufferOffsetAlignment: 256,
  maxVertexBuffers: 8,
  maxBufferSize: 268435456,
  maxVertexAttributes: 16,
  maxVertexBufferArrayStride: 2048,
  maxInterStageShaderVariables: 16,
  maxColorAttachments: 8,
  maxColorAttachmentBytesPerSample: 32,
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupSizeZ: 64,
  maxComputeWorkgroupsPerDimension: 65535,
});
/**
 * Adapter limits of WebKit's Metal backend on an Apple7-family GPU (A14 and later, so an
 * iPhone 16 Pro Max): Source/WebGPU/WebGPU/HardwareCapabilities.mm, apple7() merged with
 * apple4()-apple6() by mergeLimits() (maximum: max; alignment: min), as read at WebKit
 * commit 02cba9a8abd7. maxUniformBufferBindingSize, maxStorageBufferBindingSize and
 * maxBufferSize are set there from the device's maxBufferLength (max(256 MiB,
 * maxBufferLength / 10)); the floor, 256 MiB, is used here. Limits that file does not set
 * keep the spec default.
 */
export const WEBKIT_APPLE7_LIMITS = Object.freeze({
  ...DEFAULT_LIMITS,
  maxTextureDimension1D: 16384,
  maxTextureDimension2D: 16384,
  maxTextureArrayLayers: 2048,
  maxBindGroups: 11,
  maxBindGroupsPlusVertexBuffers: 30,
  maxBindingsPerBindGroup: 65535,
  maxDynamicUniformBuffersPerPipelineLayout: 65535,
  maxDynamicStorageBuffersPerPipelineLayout: 65535,
  maxSampledTexturesPerShaderStage: 44,
  maxSamplersPerShaderStage: 22,
  maxStorageBuffersPerShaderStage: 44,
  maxStorageTexturesPerShaderStage: 44,
  maxUniformBuffersPerShaderStage: 44,
  maxUniformBufferBindingSize: 268435456,
  maxStorageBufferBindingSize: 268435456,
  minUniformBufferOffsetAlignment: 32,
  minStorageBufferOffsetAlignment: 32,
  maxVertexBuffers: 12,
  maxVertexAttributes: 30,
  maxVertexBufferArrayStride: 65532,
  maxInterStageShaderVariables: 124,
  maxColorAttachmentBytesPerSample: 64,
  maxComputeWorkgroupStorageSize: 32768,
  maxComputeInvocationsPerWorkgroup: 1024,
  maxComputeWorkgroupSizeX: 1024,
  maxComputeWorkgroupSizeY: 1024,
  maxComputeWorkgroupSizeZ: 1024,
});

/**
 * iOS 2025: WebKit's Apple7 limits with maxBufferSize raised from 256 MiB to 1 GiB
 * (/work/shared/references.md, "WebKit memory behaviour that changed across versions": "2025: iOS
 * maxBufferSize raised from 256 MiB to 1 GiB"). The public note names maxBufferSize only, so the
 * binding-size limits keep the 256 MiB of WEBKIT_APPLE7_LIMITS.
 */
export const WEBKIT_IOS_2025_LIMITS = Object.freeze({ ...WEBKIT_APPLE7_LIMITS, maxBufferSize: 1073741824 });

/**
 * Named adapter-limit sets accepted as options.limits: 'spec-default'; 'webkit-apple7' (WebKit's
 * Metal limits, maxBufferSize 256 MiB, what iOS exposed before 2025; alias 'ios-2024');
 * 'ios-2025' (the same with maxBufferSize 1 GiB).
 */
export const LIMIT_PRESETS = Object.freeze({
  'spec-default': DEFAULT_LIMITS,
  'webkit-apple7': WEBKIT_APPLE7_LIMITS,
  'ios-2024': WEBKIT_APPLE7_LIMITS,
  'ios-2025': WEBKIT_IOS_2025_LIMITS,
});

/** Limits of the "alignment" class: lower is better. All others: higher is better. */
export const ALIGNMENT_LIMITS = new Set(['minUniformBufferOffsetAlignment', 'minStorageBufferOffsetAlignment']);

export function illegalConstructor(token) {
  if (token !== CONSTRUCT) throw new TypeError('Illegal constructor');
}

/** The native record of `obj` if it is a wrapper of the given kind, else TypeError. */
export function native(obj, kind) {
  const n = obj != null ? obj[INTERNAL] : undefined;
  if (!n || n.kind !== kind) throw new TypeError(`Illegal invocation: not a ${kind}`);
  return n;
}

/** Native record of an argument that must be a wrapper of `kind` (TypeError otherwise). */
export function arg(obj, kind, what) {
  const n = obj != null ? obj[INTERNAL] : undefined;
  if (!n || n.kind !== kind) throw new TypeError(`${what} is not of type ${kind}`);
  return n;
}

export function required(dict, member, where) {
  if (dict == null || dict[member] === undefined) {
    throw new TypeError(`${where}: required member ${member} is undefined`);
  }
  return dict[member];
}

/** WebIDL [EnforceRange] unsigned long long / unsigned long conversion. */
export function toSize(value, what, max = Number.MAX_SAFE_INTEGER) {
  const n = typeof value === 'bigint' ? Number(value) : Number(value);
  if (!Number.isFinite(n)) throw new TypeError(`${what} is not a finite number`);
  const t = Math.trunc(n);
  if (t < 0 || t > max) throw new TypeError(`${what} is outside the accepted range`);
  return t;
}

export function domException(name, message) {
  return new DOMException(message, name);
}

let runTask = null;
/** Run fn in a later task (not a microtask): setImmediate, else a MessageChannel, else setTimeout. */
export function afterTask(fn) {
  if (!runTask) {
    if (typeof setImmediate === 'function') {
      runTask = (f) => setImmediate(f);
    } else if (typeof MessageChannel === 'function') {
      const channel = new MessageChannel();
      const queue = [];
      channel.port1.onmessage = () => { const f = queue.shift(); if (f) f(); };
      runTask = (f) => { queue.push(f); channel.port2.postMessage(0); };
    } else {
      runTask = (f) => setTimeout(f, 0);
    }
  }
  runTask(fn);
}

export function nextTask() {
  return new Promise((resolve) => afterTask(resolve));
}

/** A WebIDL-like label attribute backed by the native record. */
export function defineLabel(Class) {
  Object.defineProperty(Class.prototype, 'label', {
    get() { return this[INTERNAL].label; },
    set(v) { this[INTERNAL].label = String(v); },
    enumerable: true,
    configurable: true,
  });
}

export function makeNative(kind, device, label) {
  return { kind, device, label: label === undefined ? '' : String(label), valid: true };
}
