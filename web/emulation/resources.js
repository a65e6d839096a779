// resources.js: GPUBuffer, GPUShaderModule, GPUBindGroupLayout, GPUPipelineLayout,
// Over 400 lines on purpose: every resource interface and its reference counts live in one
// module, so the native objects behind the wrappers stay private to it.
// GPUBindGroup, GPUComputePipeline and GPUQuerySet of the emulated WebGPU, with the
// reference counts that decide when their modeled native memory is released.
//
// Sources (WebGPU spec, gpuweb/gpuweb spec/index.bs):
//   "Buffers" (#buffers): createBuffer validation (usage bits, MAP_READ only with
//   COPY_DST, MAP_WRITE only with COPY_SRC, size <= maxBufferSize, mappedAtCreation needs
//   size % 4 == 0 else RangeError); "Buffer Mapping" (#buffer-mapping): mapAsync
//   (OperationError on validation failure, AbortError when cancelled by unmap or device
//   loss), getMappedRange (throws OperationError), unmap (detaches the ArrayBuffers).
//   "Resource Binding" (#bindings): createBindGroupLayout, createBindGroup validation
//   (entry count == layout entry count, each binding matches one layout entry, buffer
//   usage UNIFORM/STORAGE, offset alignment, effective size > 0, within the buffer,
//   >= minBindingSize, <= max*BufferBindingSize), createPipelineLayout.
//   "Pipelines" (#pipelines) and "Default pipeline layout" (#default-pipeline-layout):
//   'auto' layouts are built from the resources the entry point statically uses and are
//   exclusive to their pipeline; getBindGroupLayout(index) returns a new wrapper.
//   Invalid objects: a failed create returns an invalid object and generates a
//   GPUValidationError (#invalid).
//
// Memory (memory-model.js): a native record is freed when its reference count reaches 0.
// References: the wrapper (dropped by a FinalizationRegistry when the JS GC collects it),
// each command list that recorded it until its work is done, and for buffers each live
// bind group that binds them. That mirrors WebKit (Source/WebGPU/WebGPU/BindGroup.mm: the
// native BindGroup retains its MTLBuffers; encoders retain the BindGroup) and Dawn.

import {
  INTERNAL, CONSTRUCT, GPUBufferUsageFlags as U, GPUMapModeFlags, GPUShaderStageFlags, ALL_BUFFER_USAGE,
  illegalConstructor, native, arg, required, toSize, domException, defineLabel, makeNative, afterTask,
} from './internals.js';
import { generateError, validationError, GPUCompilationInfo, GPUCompilationMessage, GPUPipelineError } from './errors.js';
import { reflectWgsl, bindingsForEntryPoint } from './wgsl-reflect.js';
import { encodedLengths, bindGroupBytes } from './memory-model.js';

// ---------------------------------------------------------------------------------------
// Collection and reference counting

/** kind -> function(native) run when a wrapper registered with that native is collected. */
export const collectHandlers = Object.create(null);
export const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => { const h = collectHandlers[held.kind]; if (h) h(held); })
  : { register() {}, unregister() {} };

export function retain(n) { n.refs++; }

export function releaseRef(n) {
  if (--n.refs > 0) return;
  if (n.kind === 'buffer') freeBuffer(n, 'collected');
  else if (n.kind === 'bindGroup') freeBindGroup(n);
}

collectHandlers.buffer = (n) => releaseRef(n);
collectHandlers.bindGroup = (n) => {
  n.device.ledger.bindGroupWrappersCollected++;
  releaseRef(n);
};

function freeBuffer(n, how) {
  const dev = n.device;
  if (n.charged > 0) {
    dev.ledger.bufferReleased(n.charged, how);
    n.charged = 0;
  }
  dropEncoderRecords(n);
  dropContents(n);
  dev.liveBuffers.delete(n);
}

function freeBindGroup(n) {
  const ledger = n.device.ledger;
  ledger.bindGroupReleased(n.bytes);
  const bufs = n.buffers;
  n.buffers = null;
  n.entries = null;
  n.costBlob = null;
  for (let i = 0; i < bufs.length; i++) releaseRef(bufs[i]);
}

// ---------------------------------------------------------------------------------------
// GPUBuffer

export function ensureContents(n) {
  if (n.contents === null && n.device.options.contents !== 'none' && n.size > 0) {
    n.contents = new Uint8Array(n.size);
    n.device.ledger.bufferContentsJsBytes += n.size;
  }
  return n.contents;
}

/** Model bufferRecordsEncoders (memory-model.js, WEBKIT_MODELS): records go with the buffer. */
function dropEncoderRecords(n) {
  if (n.encoderRecords > 0) {
    n.device.ledger.encoderRecordsAdded(-n.encoderRecords);
    n.encoderRecords = 0;
  }
}

function dropContents(n) {
  if (n.contents !== null) {
    n.device.ledger.bufferContentsJsBytes -= n.size;
    n.contents = null;
  }
}

function detach(ab) {
  try { structuredClone(ab, { transfer: [ab] }); } catch { /* already detached or not transferable */ }
}

export class GPUBuffer {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
  get size() { return native(this, 'buffer').size; }
  get usage() { return native(this, 'buffer').usage; }
  get mapState() {
    const n = native(this, 'buffer');
    return n.mapping ? 'mapped' : n.pending ? 'pending' : 'unmapped';
  }

  mapAsync(mode, offset = 0, size = undefined) {
    const n = native(this, 'buffer');
    const dev = n.device;
    mode = toSize(mode, 'mapAsync mode', 0xffffffff);
    offset = toSize(offset, 'mapAsync offset');
    if (n.mapping || n.pending) {
      validationError(dev, 'mapAsync: buffer is already mapped or has a pending map');
      return Promise.reject(domException('OperationError', 'mapAsync: buffer is already mapped or has a pending map'));
    }
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    const pending = { promise, resolve, reject, mode };
    n.pending = pending;
    const rangeSize = size === undefined ? Math.max(0, n.size - offset) : toSize(size, 'mapAsync size');
    const fail = (message) => {
      validationError(dev, `mapAsync: ${message}`);
      afterTask(() => {
        if (n.pending !== pending) return;
        n.pending = null;
        reject(domException('OperationError', `mapAsync: ${message}`));
      });
      return promise;
    };
    if (dev.lost) {
      afterTask(() => { if (n.pending === pending) { n.pending = null; reject(domException('AbortError', 'mapAsync: device is lost')); } });
      return promise;
    }
    if (!n.valid) return fail('buffer is invalid');
    if (n.state === 'destroyed') return fail('buffer is destroyed');
    if (n.state !== 'available') return fail('buffer is not available');
    if (offset % 8 !== 0) return fail(`offset ${offset} is not a multiple of 8`);
    if (rangeSize % 4 !== 0) return fail(`size ${rangeSize} is not a multiple of 4`);
    if (offset + rangeSize > n.size) return fail(`range [${offset}, ${offset + rangeSize}) exceeds the buffer size ${n.size}`);
    const read = mode === GPUMapModeFlags.READ;
    const write = mode === GPUMapModeFlags.WRITE;
    if (!read && !write) return fail('mode must be exactly one of GPUMapMode.READ or GPUMapMode.WRITE');
    if (read && !(n.usage & U.MAP_READ)) return fail('buffer usage does not contain MAP_READ');
    if (write && !(n.usage & U.MAP_WRITE)) return fail('buffer usage does not contain MAP_WRITE');
    n.state = 'unavailable';
    dev.queue.whenDone(dev.queue.submitted).then(() => {
      if (n.pending !== pending) return; // cancelled by unmap()
      n.pending = null;
      if (dev.lost) {
        if (n.state === 'unavailable') n.state = 'available';
        reject(domException('AbortError', 'mapAsync: device was lost'));
        return;
      }
      n.mapping = { mode, start: offset, end: offset + rangeSize, views: [] };
      resolve(undefined);
    });
    return promise;
  }

  getMappedRange(offset = 0, size = undefined) {
    const n = native(this, 'buffer');
    offset = toSize(offset, 'getMappedRange offset');
    const m = n.mapping;
    if (!m) throw domException('OperationError', 'getMappedRange: buffer is not mapped');
    const rangeSize = size === undefined ? Math.max(0, n.size - offset) : toSize(size, 'getMappedRange size');
    if (offset % 8 !== 0) throw domException('OperationError', 'getMappedRange: offset is not a multiple of 8');
    if (rangeSize % 4 !== 0) throw domException('OperationError', 'getMappedRange: size is not a multiple of 4');
    if (offset < m.start || offset + rangeSize > m.end) throw domException('OperationError', 'getMappedRange: range is outside the mapped range');
    for (const v of m.views) {
      if (offset < v.offset + v.size && v.offset < offset + rangeSize) {
        throw domException('OperationError', 'getMappedRange: range overlaps a range already returned');
      }
    }
    const ab = new ArrayBuffer(rangeSize);
    if (n.contents !== null && rangeSize > 0) new Uint8Array(ab).set(n.contents.subarray(offset, offset + rangeSize));
    m.views.push({ offset, size: rangeSize, ab });
    return ab;
  }

  unmap() {
    const n = native(this, 'buffer');
    unmapNative(n);
  }

  destroy() {
    const n = native(this, 'buffer');
    destroyBufferNative(n);
  }
}
defineLabel(GPUBuffer);

function unmapNative(n) {
  if (n.pending) {
    const p = n.pending;
    n.pending = null;
    if (n.state === 'unavailable') n.state = 'available';
    p.reject(domException('AbortError', 'mapAsync: cancelled by unmap()'));
  }
  const m = n.mapping;
  if (!m) return;
  n.mapping = null;
  const keep = n.valid && n.state !== 'destroyed' && (m.mode === GPUMapModeFlags.WRITE);
  for (const v of m.views) {
    if (keep && v.ab.byteLength === v.size && v.size > 0) {
      const bytes = new Uint8Array(v.ab);
      if (n.contents !== null || bytes.some((x) => x !== 0)) ensureContents(n)?.set(bytes, v.offset);
    }
    detach(v.ab);
  }
  if (n.state === 'unavailable') n.state = 'available';
}

export function destroyBufferNative(n) {
  if (n.mapping || n.pending) unmapNative(n);
  if (n.state === 'destroyed') return;
  n.state = 'destroyed';
  if (n.charged > 0) {
    n.device.ledger.bufferReleased(n.charged, 'destroyed');
    n.charged = 0;
  }
  dropEncoderRecords(n);
  dropContents(n);
  n.device.liveBuffers.delete(n);
}

export function createBuffer(dev, desc) {
  const where = 'createBuffer';
  const size = toSize(required(desc, 'size', where), `${where}: size`);
  const usage = toSize(required(desc, 'usage', where), `${where}: usage`, 0xffffffff);
  const mappedAtCreation = !!desc.mappedAtCreation;
  if (mappedAtCreation && size % 4 !== 0) throw new RangeError(`${where}: mappedAtCreation requires size % 4 == 0`);
  const n = makeNative('buffer', dev, desc.label);
  n.size = size;
  n.usage = usage;
  n.state = 'available';
  n.contents = null;
  n.mapping = null;
  n.pending = null;
  n.charged = 0;
  n.encoderRecords = 0;
  n.refs = 1;
  let error = null;
  if (usage === 0) error = 'usage must not be 0';
  else if (usage & ~ALL_BUFFER_USAGE) error = `usage 0x${usage.toString(16)} has unknown bits`;
  else if ((usage & U.MAP_READ) && (usage & ~(U.MAP_READ | U.COPY_DST))) error = 'MAP_READ may only be combined with COPY_DST';
  else if ((usage & U.MAP_WRITE) && (usage & ~(U.MAP_WRITE | U.COPY_SRC))) error = 'MAP_WRITE may only be combined with COPY_SRC';
  else if (size > dev.limits.maxBufferSize) error = `size ${size} exceeds maxBufferSize ${dev.limits.maxBufferSize}`;
  if (error) {
    n.valid = false;
    validationError(dev, `${where}: ${error}`);
  } else if (!dev.lost && dev.budget?.refuses(dev, size)) {
    // model 'out-of-memory' (memory-budget.js): the allocation fails, the page lives on
    n.valid = false;
    dev.ledger.outOfMemoryErrors++;
    generateError(dev, 'out-of-memory', `${where}: out of memory: ${size} bytes${desc.label ? ` for '${desc.label}'` : ''} `
      + `would take the page's modeled bytes past memoryBudgetBytes ${dev.budget.budgetBytes} (webgpu-emulated model)`);
  } else if (!dev.lost) {
    n.charged = size;
    dev.ledger.bufferAllocated(size);
    dev.liveBuffers.add(n);
    dev.budget?.charged(dev); // memory-budget.js: may lose every device, or kill the page (throws)
  }
  if (mappedAtCreation) {
    n.mapping = { mode: GPUMapModeFlags.WRITE, start: 0, end: size, views: [] };
    n.state = 'unavailable';
  }
  const w = new GPUBuffer(CONSTRUCT, n);
  registry.register(w, n);
  return w;
}

// ---------------------------------------------------------------------------------------
// GPUShaderModule

export class GPUShaderModule {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
  getCompilationInfo() {
    const n = native(this, 'shaderModule');
    const info = new GPUCompilationInfo(INTERNAL, n.messages.map((m) => new GPUCompilationMessage(INTERNAL, m)));
    return new Promise((resolve) => afterTask(() => resolve(info)));
  }
}
defineLabel(GPUShaderModule);

export function createShaderModule(dev, desc) {
  const code = required(desc, 'code', 'createShaderModule');
  const n = makeNative('shaderModule', dev, desc.label);
  n.reflection = reflectWgsl(String(code));
  n.messages = [];
  if (!n.reflection.ok) {
    n.valid = false;
    n.messages.push({ message: n.reflection.error, type: 'error', lineNum: 0, linePos: 0, offset: 0, length: 0 });
    validationError(dev, `createShaderModule: ${n.reflection.error}`);
  }
  return new GPUShaderModule(CONSTRUCT, n);
}

// ---------------------------------------------------------------------------------------
// GPUBindGroupLayout / GPUPipelineLayout

export class GPUBindGroupLayout {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
}
defineLabel(GPUBindGroupLayout);

export class GPUPipelineLayout {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
}
defineLabel(GPUPipelineLayout);

const BUFFER_TYPES = new Set(['uniform', 'storage', 'read-only-storage']);
const RESOURCE_KINDS = ['buffer', 'sampler', 'texture', 'storageTexture', 'externalTexture'];

/** Normalize one GPUBindGroupLayoutEntry; returns [entry, errorOrNull]. */
function normalizeLayoutEntry(e, where) {
  const binding = toSize(required(e, 'binding', where), `${where}: binding`, 0xffffffff);
  const visibility = toSize(required(e, 'visibility', where), `${where}: visibility`, 0xffffffff);
  const present = RESOURCE_KINDS.filter((k) => e[k] !== undefined && e[k] !== null);
  const entry = { binding, visibility, kind: present[0] ?? 'none', type: '', hasDynamicOffset: false, minBindingSize: 0 };
  if (present.length !== 1) return [entry, `binding ${binding} must set exactly one of ${RESOURCE_KINDS.join('/')}`];
  if (visibility & ~0x7) return [entry, `binding ${binding} has unknown visibility bits`];
  if (entry.kind === 'buffer') {
    const b = e.buffer;
    entry.type = b.type ?? 'uniform';
    if (!BUFFER_TYPES.has(entry.type)) throw new TypeError(`${where}: '${entry.type}' is not a valid GPUBufferBindingType`);
    entry.hasDynamicOffset = !!b.hasDynamicOffset;
    entry.minBindingSize = toSize(b.minBindingSize ?? 0, `${where}: minBindingSize`);
    if (entry.type === 'storage' && (visibility & GPUShaderStageFlags.VERTEX)) {
      return [entry, `binding ${binding}: writable storage buffers cannot be visible to VERTEX`];
    }
  } else if (entry.kind === 'sampler') {
    entry.type = e.sampler.type ?? 'filtering';
  }
  return [entry, null];
}

export function makeBindGroupLayoutNative(dev, entries, label, exclusive) {
  const n = makeNative('bindGroupLayout', dev, label);
  n.exclusive = exclusive;
  n.entries = new Map();
  n.list = [];
  n.dynamic = []; // indices into list, in binding order
  n.bytes = 0;
  let error = null;
  for (const entry of entries) {
    if (n.entries.has(entry.binding)) { error = error ?? `binding ${entry.binding} appears twice`; continue; }
    if (entry.binding >= dev.limits.maxBindingsPerBindGroup) {
      error = error ?? `binding ${entry.binding} >= maxBindingsPerBindGroup (${dev.limits.maxBindingsPerBindGroup})`;
    }
    n.entries.set(entry.binding, entry);
    n.list.push(entry);
  }
  n.list.sort((a, b) => a.binding - b.binding);
  n.list.forEach((e, i) => { e.index = i; if (e.hasDynamicOffset) n.dynamic.push(i); });
  let dynUniform = 0;
  let dynStorage = 0;
  for (const e of n.list) {
    if (!e.hasDynamicOffset) continue;
    if (e.type === 'uniform') dynUniform++; else dynStorage++;
  }
  if (dynUniform > dev.limits.maxDynamicUniformBuffersPerPipelineLayout) error = error ?? 'too many dynamic uniform buffers';
  if (dynStorage > dev.limits.maxDynamicStorageBuffersPerPipelineLayout) error = error ?? 'too many dynamic storage buffers';
  for (const [bit, stage] of [[1, 'vertex'], [2, 'fragment'], [4, 'compute']]) {
    const vis = n.list.filter((e) => (e.visibility & bit) && e.kind === 'buffer');
    const storage = vis.filter((e) => e.type !== 'uniform').length;
    const uniform = vis.length - storage;
    if (storage > dev.limits.maxStorageBuffersPerShaderStage) error = error ?? `too many storage buffers in the ${stage} stage`;
    if (uniform > dev.limits.maxUniformBuffersPerShaderStage) error = error ?? `too many uniform buffers in the ${stage} stage`;
  }
  n.dynamicUniformCount = dynUniform;
  n.dynamicStorageCount = dynStorage;
  if (error) {
    n.valid = false;
    return [n, error];
  }
  n.lengths = encodedLengths(dev.model, n.list);
  n.bytes = bindGroupBytes(dev.model, n.lengths);
  return [n, null];
}

export function createBindGroupLayout(dev, desc) {
  const where = 'createBindGroupLayout';
  const raw = required(desc, 'entries', where);
  const entries = [];
  let firstError = null;
  for (const e of raw) {
    const [entry, err] = normalizeLayoutEntry(e, where);
    entries.push(entry);
    firstError = firstError ?? err;
  }
  const [n, err] = makeBindGroupLayoutNative(dev, entries, desc.label, null);
  if (firstError || err) {
    n.valid = false;
    validationError(dev, `${where}: ${firstError || err}`);
  }
  return new GPUBindGroupLayout(CONSTRUCT, n);
}

export function createPipelineLayout(dev, desc) {
  const where = 'createPipelineLayout';
  const layouts = required(desc, 'bindGroupLayouts', where);
  const n = makeNative('pipelineLayout', dev, desc.label);
  n.groups = [];
  let error = null;
  for (const l of layouts) {
    if (l === null || l === undefined) { n.groups.push(null); continue; }
    const ln = arg(l, 'bindGroupLayout', `${where}: bindGroupLayouts entry`);
    if (!ln.valid) error = error ?? 'a bind group layout is invalid';
    if (ln.device !== dev) error = error ?? 'a bind group layout belongs to another device';
    n.groups.push(ln);
  }
  if (n.groups.length > dev.limits.maxBindGroups) error = error ?? `more than maxBindGroups (${dev.limits.maxBindGroups}) layouts`;
  let dynU = 0;
  let dynS = 0;
  for (const g of n.groups) if (g) { dynU += g.dynamicUniformCount; dynS += g.dynamicStorageCount; }
  if (dynU > dev.limits.maxDynamicUniformBuffersPerPipelineLayout) error = error ?? 'too many dynamic uniform buffers';
  if (dynS > dev.limits.maxDynamicStorageBuffersPerPipelineLayout) error = error ?? 'too many dynamic storage buffers';
  if (error) {
    n.valid = false;
    validationError(dev, `${where}: ${error}`);
  }
  return new GPUPipelineLayout(CONSTRUCT, n);
}

/** Spec "group-equivalent": same exclusive pipeline (or none) and identical entries. */
export function layoutsCompatible(a, b) {
  if (a === b) return true;
  if (a.exclusive !== b.exclusive || a.list.length !== b.list.length) return false;
  for (let i = 0; i < a.list.length; i++) {
    const x = a.list[i];
    const y = b.list[i];
    if (x.binding !== y.binding || x.visibility !== y.visibility || x.kind !== y.kind || x.type !== y.type ||
        x.hasDynamicOffset !== y.hasDynamicOffset || x.minBindingSize !== y.minBindingSize) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// GPUBindGroup

export class GPUBindGroup {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
}
defineLabel(GPUBindGroup);

export function createBindGroup(dev, desc) {
  const where = 'createBindGroup';
  const layoutW = required(desc, 'layout', where);
  const layout = arg(layoutW, 'bindGroupLayout', `${where}: layout`);
  const raw = required(desc, 'entries', where);
  const n = makeNative('bindGroup', dev, desc.label);
  n.layout = layout;
  n.bytes = 0;
  n.refs = 1;
  n.buffers = null;
  n.entries = null;
  n.costBlob = null;
  const count = layout.list.length;
  const entries = new Array(count);
  const buffers = [];
  let error = null;
  const limits = dev.limits;
  if (!layout.valid) error = 'layout is invalid';
  else if (layout.device !== dev) error = 'layout belongs to another device';
  else if (raw.length !== count) error = `${raw.length} entries given but the layout has ${count}`;
  for (let i = 0; i < raw.length && !error; i++) {
    const e = raw[i];
    const binding = toSize(required(e, 'binding', where), `${where}: binding`, 0xffffffff);
    const resource = required(e, 'resource', where);
    const le = layout.entries.get(binding);
    if (!le) { error = `binding ${binding} is not in the layout`; break; }
    if (entries[le.index]) { error = `binding ${binding} appears twice`; break; }
    if (le.kind !== 'buffer') { error = `binding ${binding}: ${le.kind} bindings are not emulated`; break; }
    const direct = resource[INTERNAL] && resource[INTERNAL].kind === 'buffer';
    const bufW = direct ? resource : resource.buffer;
    if (!bufW || !bufW[INTERNAL] || bufW[INTERNAL].kind !== 'buffer') {
      throw new TypeError(`${where}: binding ${binding} needs a GPUBuffer or GPUBufferBinding`);
    }
    const b = bufW[INTERNAL];
    const offset = direct ? 0 : toSize(resource.offset ?? 0, `${where}: offset`);
    if (!b.valid) { error = `binding ${binding}: buffer is invalid`; break; }
    if (b.device !== dev) { error = `binding ${binding}: buffer belongs to another device`; break; }
    if (offset > b.size) { error = `binding ${binding}: offset ${offset} > buffer size ${b.size}`; break; }
    const size = direct || resource.size === undefined ? b.size - offset : toSize(resource.size, `${where}: size`);
    if (offset + size > b.size) { error = `binding ${binding}: range [${offset}, ${offset + size}) exceeds buffer size ${b.size}`; break; }
    if (size === 0) { error = `binding ${binding}: effective binding size is 0`; break; }
    if (le.type === 'uniform') {
      if (!(b.usage & U.UNIFORM)) { error = `binding ${binding}: buffer usage lacks UNIFORM for a uniform binding`; break; }
      if (size > limits.maxUniformBufferBindingSize) { error = `binding ${binding}: size ${size} > maxUniformBufferBindingSize`; break; }
      if (offset % limits.minUniformBufferOffsetAlignment) { error = `binding ${binding}: offset ${offset} is not a multiple of minUniformBufferOffsetAlignment`; break; }
    } else {
      if (!(b.usage & U.STORAGE)) { error = `binding ${binding}: buffer usage lacks STORAGE for a ${le.type} binding`; break; }
      if (size > limits.maxStorageBufferBindingSize) { error = `binding ${binding}: size ${size} > maxStorageBufferBindingSize`; break; }
      if (size % 4) { error = `binding ${binding}: storage binding size ${size} is not a multiple of 4`; break; }
      if (offset % limits.minStorageBufferOffsetAlignment) { error = `binding ${binding}: offset ${offset} is not a multiple of minStorageBufferOffsetAlignment`; break; }
    }
    if (le.minBindingSize && size < le.minBindingSize) {
      error = `binding ${binding}: buffer binding size ${size} is smaller than the minimum binding size ${le.minBindingSize}`;
      break;
    }
    entries[le.index] = { buffer: b, offset, size };
    buffers.push(b);
  }
  if (error || dev.lost) {
    n.valid = false;
    if (error) {
      dev.ledger.bindGroupsInvalid++;
      validationError(dev, `${where}: ${error}`);
    }
  } else {
    // Keep per-entry ranges only where setBindGroup needs them (dynamic offsets): the JS
    // heap per bind group should stay small, as a real wrapper's is (see README.md).
    n.entries = layout.dynamic.length ? entries : null;
    n.buffers = buffers;
    for (let i = 0; i < buffers.length; i++) buffers[i].refs++;
    n.bytes = layout.bytes;
    if (dev.model.reportCostToJs && n.bytes > 0) n.costBlob = new ArrayBuffer(n.bytes);
    dev.ledger.bindGroupAllocated(n.bytes);
    dev.budget?.charged(dev);
  }
  const w = new GPUBindGroup(CONSTRUCT, n);
  if (n.valid) registry.register(w, n);
  return w;
}

// ---------------------------------------------------------------------------------------
// GPUComputePipeline

export class GPUComputePipeline {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
  getBindGroupLayout(index) {
    const n = native(this, 'computePipeline');
    const dev = n.device;
    index = toSize(index, 'getBindGroupLayout index', 0xffffffff);
    if (index >= dev.limits.maxBindGroups) throw new RangeError(`getBindGroupLayout: index ${index} >= maxBindGroups`);
    if (!n.valid || index >= n.layout.groups.length || !n.layout.groups[index]) {
      validationError(dev, `getBindGroupLayout: ${n.valid ? `index ${index} is out of range` : 'pipeline is invalid'}`);
      const [bad] = makeBindGroupLayoutNative(dev, [], '', null);
      bad.valid = false;
      return new GPUBindGroupLayout(CONSTRUCT, bad);
    }
    return new GPUBindGroupLayout(CONSTRUCT, n.layout.groups[index]);
  }
}
defineLabel(GPUComputePipeline);

/** Returns [native, errorMessageOrNull]; never generates errors itself. */
function buildComputePipeline(dev, desc, where) {
  const layoutArg = required(desc, 'layout', where);
  const compute = required(desc, 'compute', where);
  const moduleN = arg(required(compute, 'module', `${where}: compute`), 'shaderModule', `${where}: compute.module`);
  const n = makeNative('computePipeline', dev, desc.label);
  n.layout = { groups: [] };
  n.entryPoint = null;
  const fail = (msg) => { n.valid = false; return [n, msg]; };
  if (!moduleN.valid) return fail('shader module is invalid');
  const eps = moduleN.reflection.entryPoints.filter((e) => e.stage === 'compute');
  let ep;
  if (compute.entryPoint !== undefined && compute.entryPoint !== null) {
    ep = eps.find((e) => e.name === String(compute.entryPoint));
    if (!ep) return fail(`entry point '${compute.entryPoint}' is not a @compute function of the module`);
  } else {
    if (eps.length !== 1) return fail(`entryPoint omitted but the module has ${eps.length} compute entry points`);
    ep = eps[0];
  }
  n.entryPoint = ep.name;
  const used = bindingsForEntryPoint(moduleN.reflection, ep.name);
  for (const r of used) {
    if (r.group === undefined || r.binding === undefined) return fail(`variable '${r.name}' has a non-literal @group/@binding`);
    if (r.group >= dev.limits.maxBindGroups) return fail(`@group(${r.group}) >= maxBindGroups`);
    if (r.kind === 'unknown') return fail(`variable '${r.name}' has an unsupported resource type`);
  }
  if (layoutArg === 'auto') {
    n.isAuto = true;
    const exclusive = {}; // identity tag: this pipeline's default layouts are compatible only with each other
    const groupCount = used.reduce((m, r) => Math.max(m, r.group + 1), 0);
    for (let g = 0; g < groupCount; g++) {
      const entries = used.filter((r) => r.group === g).map((r) => ({
        binding: r.binding,
        visibility: GPUShaderStageFlags.COMPUTE,
        kind: r.kind,
        type: r.kind === 'buffer' ? r.type : (r.type || ''),
        hasDynamicOffset: false,
        minBindingSize: r.kind === 'buffer' ? r.minBindingSize : 0,
      }));
      const [ln, err] = makeBindGroupLayoutNative(dev, entries, '', exclusive);
      if (err) return fail(`default layout for group ${g}: ${err}`);
      n.layout.groups.push(ln);
    }
    return [n, null];
  }
  const pl = arg(layoutArg, 'pipelineLayout', `${where}: layout`);
  if (!pl.valid) return fail('pipeline layout is invalid');
  n.isAuto = false;
  n.layout = pl;
  for (const r of used) {
    const g = pl.groups[r.group];
    const le = g && g.entries.get(r.binding);
    if (!le) return fail(`@group(${r.group}) @binding(${r.binding}) is not in the pipeline layout`);
    if (!(le.visibility & GPUShaderStageFlags.COMPUTE)) return fail(`@group(${r.group}) @binding(${r.binding}) is not visible to COMPUTE`);
    if (le.kind !== r.kind || (r.kind === 'buffer' && le.type !== r.type)) {
      return fail(`@group(${r.group}) @binding(${r.binding}) is '${r.type || r.kind}' in the shader but '${le.type || le.kind}' in the layout`);
    }
    if (r.kind === 'buffer' && le.minBindingSize && le.minBindingSize < r.minBindingSize) {
      return fail(`@group(${r.group}) @binding(${r.binding}): layout minBindingSize ${le.minBindingSize} < shader minimum ${r.minBindingSize}`);
    }
  }
  return [n, null];
}

export function createComputePipeline(dev, desc) {
  const [n, err] = buildComputePipeline(dev, desc, 'createComputePipeline');
  if (err) validationError(dev, `createComputePipeline: ${err}`);
  return new GPUComputePipeline(CONSTRUCT, n);
}

export function createComputePipelineAsync(dev, desc) {
  let built;
  try {
    built = buildComputePipeline(dev, desc, 'createComputePipelineAsync');
  } catch (e) {
    return Promise.reject(e);
  }
  const [n, err] = built;
  return new Promise((resolve, reject) => afterTask(() => {
    if (err) reject(new GPUPipelineError(`createComputePipelineAsync: ${err}`, { reason: 'validation' }));
    else resolve(new GPUComputePipeline(CONSTRUCT, n));
  }));
}

// ---------------------------------------------------------------------------------------
// GPUQuerySet

export class GPUQuerySet {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
  get type() { return native(this, 'querySet').type; }
  get count() { return native(this, 'querySet').count; }
  destroy() { native(this, 'querySet').destroyed = true; }
}
defineLabel(GPUQuerySet);

export function createQuerySet(dev, desc) {
  const where = 'createQuerySet';
  const type = String(required(desc, 'type', where));
  if (type !== 'timestamp' && type !== 'occlusion') throw new TypeError(`${where}: '${type}' is not a valid GPUQueryType`);
  const count = toSize(required(desc, 'count', where), `${where}: count`, 0xffffffff);
  const n = makeNative('querySet', dev, desc.label);
  n.type = type;
  n.count = count;
  n.destroyed = false;
  let error = null;
  if (count > 4096) error = 'count > 4096';
  else if (type === 'timestamp' && !dev.features.has('timestamp-query')) error = "type 'timestamp' needs the 'timestamp-query' feature";
  if (error) {
    n.valid = false;
    validationError(dev, `${where}: ${error}`);
  }
  return new GPUQuerySet(CONSTRUCT, n);
}
