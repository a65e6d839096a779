// WebGPU call counters, installed in the worker before any workload code.
//
// Wraps prototype methods of the WebGPU interfaces (WebGPU spec §21 "Programming model" names:
// GPUDevice, GPUQueue, GPUCommandEncoder, GPUComputePassEncoder, GPUBuffer) so that every call made by a workload
// or by a library it loads (onnxruntime-web) is counted. The wrapper only increments a number
// and forwards the call with the same `this` and arguments; results are returned unchanged.
//
// counts: {name -> calls since install}. `writeBufferBytes` and `commandBuffersSubmitted` count
// bytes and command buffers rather than calls; `createBufferBytes` the bytes asked of
// GPUDevice.createBuffer (descriptor.size; a creation that then fails validation is counted
// too: an `uncaptured_error` sample says so). `lastSubmitEndMs` is the performance.now() (ms)
// at which the most recent GPUQueue.submit returned, used for the step's CPU encode+submit time.

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
    createBufferHooks(buf, args, device);
  });
  add('GPUDevice', 'createComputePipeline', 'createComputePipeline');
  add('GPUDevice', 'createComputePipelineAsync', 'createComputePipelineAsync');
  add('GPUDevice', 'createShaderModule', 'createShaderModule');
  add('GPUDevice', 'createCommandEncoder', 'createCommandEncoder');
  add('GPUComputePassEncoder', 'dispatchWorkgroups', 'dispatchWorkgroups');
  add('GPUComputePassEncoder', 'dispatchWorkgroupsIndirect', 'dispatchWorkgroupsIndirect');
  add('GPUBuffer', 'mapAsync', 'mapAsync');
  add('GPUBuffer', 'destroy', 'bufferDestroy', runHooks('bufferDestroy'));
  add('GPUDevice', 'destroy', null, runHooks('deviceDestroy'));
  add('GPUCommandEncoder', 'beginComputePass', 'beginComputePass');
  add('GPUCommandEncoder', 'copyBufferToBuffer', 'copyBufferToBuffer');
  add('GPUQueue', 'onSubmittedWorkDone', 'onSubmittedWorkDone');
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
