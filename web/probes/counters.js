// WebGPU call counters, installed in the worker before any workload code.
//
// Wraps prototype methods of the WebGPU interfaces (WebGPU spec §21 "Programming model" names:
// GPUDevice, GPUQueue, GPUCommandEncoder, GPUComputePassEncoder, GPURenderPassEncoder,
// GPURenderBundleEncoder, GPUBuffer) so that every call made by a workload
// or by a library it loads (onnxruntime-web) is counted. The wrapper only increments a number
// and forwards the call with the same `this` and arguments; results are returned unchanged.
//
// counts: {name -> calls since install}. `writeBufferBytes` and `commandBuffersSubmitted` count
// bytes and command buffers rather than calls; `createBufferBytes` the bytes asked of
// GPUDevice.createBuffer (descriptor.size; a creation that then fails validation is counted
// too: an `uncaptured_error` sample says so), and `createBufferBytes<Flag>` the same bytes under
// each GPUBufferUsage flag the buffer has (WebGPU spec §5.1.2 "Buffer Usages"; a STORAGE |
// COPY_DST buffer counts under both). `setBindGroupDynamicOffsets` counts the setBindGroup calls
// that pass at least one dynamic offset; `setImmediatesBytes` the bytes setImmediates passes.
// Render work (render passes, the four draw calls, render pipelines) is counted like compute
// work, so an app that draws is not reduced to "0 dispatches". Draws recorded into a
// GPURenderBundleEncoder count once, when recorded (not per executeBundles).
// `lastSubmitEndMs` is the performance.now() (ms) at which the most recent GPUQueue.submit
// returned, used for the step's CPU encode+submit time.
//
// Buffers by label: every createBuffer is also summed per (label, usage) until
// takeCreatedBuffers() hands the groups over (each step sample carries its step's groups as
// `created_buffers`, at most MAX_BUFFER_GROUPS of them, the rest summed into one '(other)').

import { COUNTER_NAMES } from './catalog.js';

/** Counter names (web/probes/catalog.js: THE catalog; a new counter is added there, at the end,
 *  and wrapped in installCounters), in the order of the steps.csv columns. */
export { COUNTER_NAMES };

export const counts = Object.fromEntries(COUNTER_NAMES.map((n) => [n, 0]));
export const timing = { lastSubmitEndMs: null };

const hooks = { createBindGroup: [], createBuffer: [], bufferDestroy: [], deviceDestroy: [] };
let anyCall = null;

/** Call fn() after every counted call (one function: the injected bootstrap's open-step
 *  snapshots, web/inject/bootstrap.js); null removes it. */
export function onAnyCall(fn) {
  anyCall = fn;
}

/** GPUBufferUsage flags (WebGPU spec §5.1.2) → the counter of bytes created with that flag. */
export const USAGE_COUNTERS = [
  [0x0001, 'createBufferBytesMapRead'], [0x0002, 'createBufferBytesMapWrite'], [0x0004, 'createBufferBytesCopySrc'],
  [0x0008, 'createBufferBytesCopyDst'], [0x0010, 'createBufferBytesIndex'], [0x0020, 'createBufferBytesVertex'],
  [0x0040, 'createBufferBytesUniform'], [0x0080, 'createBufferBytesStorage'], [0x0100, 'createBufferBytesIndirect'],
  [0x0200, 'createBufferBytesQueryResolve'],
];

/** Most (label, usage) groups one step sample carries; the rest are summed into '(other)'. */
export const MAX_BUFFER_GROUPS = 32;
/** Labels are cut to this many characters. */
export const MAX_LABEL_CHARS = 100;
let createdBuffers = new Map(); // `${usage}|${label}` -> {label, usage, buffers, bytes}

function recordCreatedBuffer(descriptor) {
  const size = Number(descriptor?.size ?? 0) || 0;
  const usage = Number(descriptor?.usage ?? 0) >>> 0;
  for (const [flag, name] of USAGE_COUNTERS) if (usage & flag) counts[name] += size;
  const label = String(descriptor?.label ?? '').slice(0, MAX_LABEL_CHARS);
  const key = `${usage}|${label}`;
  let g = createdBuffers.get(key);
  if (!g) {
    if (createdBuffers.size > 4 * MAX_BUFFER_GROUPS) {
      // many distinct labels in one step: keep the map small, fold into '(other)' now
      g = createdBuffers.get('0|(other)') ?? { label: '(other)', usage: 0, buffers: 0, bytes: 0 };
      createdBuffers.set('0|(other)', g);
    } else {
      g = { label, usage, buffers: 0, bytes: 0 };
      createdBuffers.set(key, g);
    }
  }
  g.buffers += 1;
  g.bytes += size;
}

/**
 * The buffers created since the last call, grouped by (label, usage): [{label ('' when the app
 * set none), usage (GPUBufferUsage bits; 0 for the '(other)' group), buffers, bytes}], largest
 * bytes first, at most MAX_BUFFER_GROUPS entries (the rest summed into label '(other)').
 */
export function takeCreatedBuffers() {
  const groups = [...createdBuffers.values()].sort((a, b) => b.bytes - a.bytes || b.buffers - a.buffers);
  createdBuffers = new Map();
  if (groups.length <= MAX_BUFFER_GROUPS) return groups;
  const kept = groups.filter((g) => g.label !== '(other)' || g.usage !== 0).slice(0, MAX_BUFFER_GROUPS - 1);
  const other = { label: '(other)', usage: 0, buffers: 0, bytes: 0 };
  for (const g of groups) {
    if (kept.includes(g)) continue;
    other.buffers += g.buffers;
    other.bytes += g.bytes;
  }
  return [...kept, other];
}

/**
 * Register fn(result, args, thisArg) to be called after each call of a hooked method:
 * 'createBindGroup' / 'createBuffer' (result: the new object, thisArg: the GPUDevice),
 * 'bufferDestroy' (thisArg: the GPUBuffer), 'deviceDestroy' (thisArg: the GPUDevice).
 */
export function onCreate(kind, fn) {
  hooks[kind].push(fn);
}

const runHooks = (kind) => (result, args, self) => { for (const f of hooks[kind]) f(result, args, self); };

function wrap(proto, method, counter, after) {
  if (!proto || typeof proto[method] !== 'function') return false;
  const original = proto[method];
  if (original.__harnessWrapped) return true;
  const wrapped = function (...args) {
    if (counter) counts[counter] += 1;
    const result = original.apply(this, args);
    if (after) after(result, args, this);
    if (anyCall !== null) anyCall();
    return result;
  };
  wrapped.__harnessWrapped = true;
  wrapped.__harnessOriginal = original;
  Object.defineProperty(proto, method, { value: wrapped, writable: true, configurable: true });
  return true;
}

function byteLengthOf(data, dataOffset, size) {
  // GPUQueue.writeBuffer(buffer, bufferOffset, data, dataOffset?, size?): size is in elements
  // for TypedArrays and bytes for ArrayBuffer/DataView (WebGPU spec §19.3 "writeBuffer").
  const elem = ArrayBuffer.isView(data) && !(data instanceof DataView) ? data.BYTES_PER_ELEMENT : 1;
  const total = ArrayBuffer.isView(data) ? data.byteLength : data.byteLength ?? 0;
  if (size !== undefined) return size * elem;
  return total - (dataOffset ?? 0) * elem;
}

/**
 * Install the counters on the WebGPU prototypes of `scope` (a worker's global object).
 * Returns the list of "Interface.method" names that were wrapped (empty when the scope has no
 * WebGPU interfaces, e.g. WebKitGTK without emulation).
 */
export function installCounters(scope = globalThis) {
  // the realm's own clock: a frame entered from its parent (web/inject/frames.js) runs this
  // code in the parent's realm, but its step times are on the frame's performance.now()
  const perf = scope.performance ?? performance;
  const installed = [];
  const add = (iface, method, counter, after) => {
    if (wrap(scope[iface]?.prototype, method, counter, after)) installed.push(`${iface}.${method}`);
  };
  add('GPUDevice', 'createBindGroup', 'createBindGroup', runHooks('createBindGroup'));
  const createBufferHooks = runHooks('createBuffer');
  add('GPUDevice', 'createBuffer', 'createBuffer', (buf, args, device) => {
    counts.createBufferBytes += Number(args[0]?.size ?? 0) || 0;
    recordCreatedBuffer(args[0]);
    createBufferHooks(buf, args, device);
  });
  add('GPUDevice', 'createComputePipeline', 'createComputePipeline');
  add('GPUDevice', 'createComputePipelineAsync', 'createComputePipelineAsync');
  add('GPUDevice', 'createRenderPipeline', 'createRenderPipeline');
  add('GPUDevice', 'createRenderPipelineAsync', 'createRenderPipelineAsync');
  add('GPUDevice', 'createShaderModule', 'createShaderModule');
  add('GPUDevice', 'createCommandEncoder', 'createCommandEncoder');
  add('GPUComputePassEncoder', 'dispatchWorkgroups', 'dispatchWorkgroups');
  add('GPUComputePassEncoder', 'dispatchWorkgroupsIndirect', 'dispatchWorkgroupsIndirect');
  add('GPUBuffer', 'mapAsync', 'mapAsync');
  add('GPUBuffer', 'destroy', 'bufferDestroy', runHooks('bufferDestroy'));
  add('GPUDevice', 'destroy', null, runHooks('deviceDestroy'));
  add('GPUCommandEncoder', 'beginComputePass', 'beginComputePass');
  add('GPUCommandEncoder', 'beginRenderPass', 'beginRenderPass');
  // setBindGroup(index, bindGroup, dynamicOffsets?) or (index, bindGroup, Uint32Array, start, length)
  const dynamicOffsets = (_r, args) => {
    const n = args.length >= 5 ? Number(args[4]) : args[2]?.length ?? 0;
    if (n > 0) counts.setBindGroupDynamicOffsets += 1;
  };
  // setImmediates(rangeOffset, data, dataOffset?, size?): sizes as writeBuffer's
  const immediateBytes = (_r, args) => { counts.setImmediatesBytes += byteLengthOf(args[1], args[2], args[3]); };
  for (const iface of ['GPUComputePassEncoder', 'GPURenderPassEncoder', 'GPURenderBundleEncoder']) {
    add(iface, 'setBindGroup', 'setBindGroup', dynamicOffsets);
    add(iface, 'setImmediates', 'setImmediates', immediateBytes);
  }
  for (const iface of ['GPURenderPassEncoder', 'GPURenderBundleEncoder']) {
    for (const method of ['draw', 'drawIndexed', 'drawIndirect', 'drawIndexedIndirect']) add(iface, method, method);
  }
  add('GPUCommandEncoder', 'copyBufferToBuffer', 'copyBufferToBuffer');
  add('GPUQueue', 'onSubmittedWorkDone', 'onSubmittedWorkDone');
  // uncaptured errors per step: a listener on every device this realm gets (WebGPU spec
  // "Errors & Debugging"); counted when the event is delivered (a later task than the call
  // that caused it, usually within the same step)
  const errorClass = (name) => (typeof scope[name] === 'function' ? scope[name] : null);
  add('GPUAdapter', 'requestDevice', null, (promise) => {
    Promise.resolve(promise).then((device) => {
      device?.addEventListener?.('uncapturederror', (e) => {
        counts.uncapturedErrors += 1;
        const err = e.error;
        const is = (name) => { const C = errorClass(name); return C ? err instanceof C : err?.constructor?.name === name; };
        if (is('GPUOutOfMemoryError')) counts.uncapturedOutOfMemoryErrors += 1;
        else if (is('GPUValidationError')) counts.uncapturedValidationErrors += 1;
      });
    }, () => {});
  });
  add('GPUQueue', 'submit', 'submit', (_r, args) => {
    counts.commandBuffersSubmitted += args[0]?.length ?? 0;
    timing.lastSubmitEndMs = perf.now();
  });
  add('GPUQueue', 'writeBuffer', 'writeBuffer', (_r, args) => {
    counts.writeBufferBytes += byteLengthOf(args[2], args[3], args[4]);
  });
  return installed;
}

/** A copy of the counters, for computing per-step deltas. */
export function snapshot() {
  return { ...counts };
}
