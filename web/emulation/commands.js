// commands.js: GPUCommandEncoder, GPUComputePassEncoder, GPUCommandBuffer and GPUQueue
// Over 400 lines on purpose: encoders, passes and the queue share the command-list state
// (what a submitted list keeps alive); splitting them would expose it between modules.
// of the emulated WebGPU. No shader runs: dispatches are validated and counted;
// copyBufferToBuffer, clearBuffer, resolveQuerySet and writeBuffer really move bytes.
//
// Sources (WebGPU spec, gpuweb/gpuweb spec/index.bs):
//   "Command Encoding" (#command-encoding): encoder states open/locked/ended; a command
//   recorded while a pass is open invalidates the encoder; a command after finish()
//   generates a validation error; finish() with an open pass or on an invalid encoder
//   generates a validation error and returns an invalid GPUCommandBuffer.
//   copyBufferToBuffer / clearBuffer / resolveQuerySet validation (usage, 4-byte
//   alignment, bounds, destinationOffset % 256 for query resolves).
//   "Compute Passes" (#compute-passes): setBindGroup with dynamic offsets (count and
//   alignment), dispatch-time validation that every group of the pipeline layout has a
//   compatible bind group, dispatchWorkgroupsIndirect (INDIRECT usage).
//   "Queues" (#gpuqueue): submit() validation (unique, valid, not yet submitted command
//   buffers; every buffer used must be "available": not destroyed, not mapped);
//   submitted command buffers become invalid; writeBuffer (TypedArray offsets in
//   elements, OperationError for a bad data range, COPY_DST usage, 4-byte alignment);
//   onSubmittedWorkDone().
//
// Object graph (memory-model.js): an encoder's command list retains the native record of
// every bind group set on it and every buffer it copies; the list moves to the command
// buffer at finish() and to the queue at submit(), and is released when the submitted
// work is done (a later task by default). If an encoder or command buffer wrapper is
// collected unsubmitted, its list is released then. Like the engines, the list does not
// retain the JS wrappers: Blink's gpu_compute_pass_encoder.cc passes
// bindGroup->GetHandle() and WebCore's GPUComputePassEncoder.cpp passes
// bindGroup.backing() down, storing no reference to the GPUBindGroup wrapper, so a
// wrapper can be collected while its work is in flight; the native memory then waits for
// the work. options.retainWrappersUntilDone = true makes the list hold the wrappers too.

import {
  INTERNAL, CONSTRUCT, GPUBufferUsageFlags as U, illegalConstructor, native, arg, toSize,
  domException, defineLabel, makeNative, afterTask,
} from './internals.js';
import { validationError } from './errors.js';
import { registry, collectHandlers, releaseRef, ensureContents, layoutsCompatible } from './resources.js';

// ---------------------------------------------------------------------------------------
// Command lists

function newList(dev) {
  return {
    kind: 'commandList', device: dev, released: false,
    held: new Set(), // bind groups and buffers this list retains
    usedBindGroups: new Set(), // bind groups used by a dispatch (validated at submit)
    usedBuffers: new Set(), // buffers used by copies/clears/resolves/indirect dispatches
    commands: [], dispatches: 0,
    wrappers: [], // only with options.retainWrappersUntilDone (not what engines do)
    recorded: null, // buffers this encoder was recorded on (model bufferRecordsEncoders)
  };
}

/**
 * Model bufferRecordsEncoders (memory-model.js, WEBKIT_MODELS): the first use of buffer native
 * `b` by this command list leaves one record on the buffer until it is destroyed or collected.
 */
function recordUse(list, b) {
  const dev = list.device;
  if (!dev.model.bufferRecordsEncoders || list.released || !b.valid || b.state === 'destroyed') return;
  if (!list.recorded) list.recorded = new Set();
  if (list.recorded.has(b)) return;
  list.recorded.add(b);
  b.encoderRecords++;
  dev.ledger.encoderRecordsAdded(1);
  dev.budget?.charged(dev);
}

/** Model encoderRetainsBindGroups: the set, kept on the encoder wrapper, of bind group wrappers
 *  set on its passes (memory-model.js, WEBKIT_MODELS). */
const RETAINED_BIND_GROUPS = Symbol('webgpu-emulated.retainedBindGroups');

function hold(list, n) {
  if (list.released || list.held.has(n)) return;
  list.held.add(n);
  n.refs++;
  if (n.kind === 'bindGroup') list.device.ledger.bindGroupRefsHeldByWork++;
}

export function releaseList(list) {
  if (list.released) return;
  list.released = true;
  const ledger = list.device.ledger;
  for (const n of list.held) {
    if (n.kind === 'bindGroup') ledger.bindGroupRefsHeldByWork--;
    releaseRef(n);
  }
  list.held.clear();
  list.usedBindGroups.clear();
  list.usedBuffers.clear();
  list.commands = [];
  list.wrappers = [];
  list.recorded = null;
}

collectHandlers.commandList = (list) => releaseList(list);

// ---------------------------------------------------------------------------------------
// GPUCommandEncoder

function encoderError(enc, message) {
  if (!enc.error) enc.error = message;
}

/** Spec "validate the encoder state": ended -> validation error now; locked -> invalidates. */
function encoderUsable(enc, what) {
  if (enc.state === 'ended') {
    validationError(enc.device, `${what}: the command encoder is already finished`);
    return false;
  }
  if (enc.state === 'locked') {
    encoderError(enc, `${what} while a pass is open`);
    return false;
  }
  return true;
}

export class GPUCommandEncoder {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }

  beginComputePass(descriptor = {}) {
    const enc = native(this, 'commandEncoder');
    const pass = makeNative('computePass', enc.device, descriptor?.label);
    pass.encoder = enc;
    pass.pipeline = null;
    pass.bound = [];
    pass.debugDepth = 0;
    pass.state = 'open';
    // model encoderRetainsBindGroups: the pass adds to a set owned by this encoder wrapper
    if (enc.device.model.encoderRetainsBindGroups) {
      if (!this[RETAINED_BIND_GROUPS]) Object.defineProperty(this, RETAINED_BIND_GROUPS, { value: new Set() });
      pass.retained = this[RETAINED_BIND_GROUPS];
    } else {
      pass.retained = null;
    }
    if (!encoderUsable(enc, 'beginComputePass')) {
      pass.state = 'ended';
    } else {
      enc.state = 'locked';
      const tw = descriptor?.timestampWrites;
      if (tw) {
        const qs = arg(tw.querySet, 'querySet', 'beginComputePass: timestampWrites.querySet');
        if (!qs.valid || qs.type !== 'timestamp') encoderError(enc, 'timestampWrites.querySet must be a valid timestamp query set');
      }
    }
    return new GPUComputePassEncoder(CONSTRUCT, pass);
  }

  beginRenderPass() {
    throw domException('NotSupportedError', 'webgpu-emulated: render passes are not emulated');
  }

  copyBufferToBuffer(source, a, b, c, d) {
    const enc = native(this, 'commandEncoder');
    let srcOffset;
    let dstW;
    let dstOffset;
    let size;
    if (a != null && a[INTERNAL]) { // (source, destination, size?)
      srcOffset = 0; dstW = a; dstOffset = 0; size = b;
    } else {
      srcOffset = toSize(a, 'copyBufferToBuffer sourceOffset'); dstW = b; dstOffset = toSize(c, 'copyBufferToBuffer destinationOffset'); size = d;
    }
    const src = arg(source, 'buffer', 'copyBufferToBuffer: source');
    const dst = arg(dstW, 'buffer', 'copyBufferToBuffer: destination');
    size = size === undefined ? Math.max(0, src.size - srcOffset) : toSize(size, 'copyBufferToBuffer size');
    if (!encoderUsable(enc, 'copyBufferToBuffer')) return;
    let error = null;
    if (!src.valid || !dst.valid) error = 'source or destination buffer is invalid';
    else if (src.device !== enc.device || dst.device !== enc.device) error = 'buffer belongs to another device';
    else if (!(src.usage & U.COPY_SRC)) error = 'source usage lacks COPY_SRC';
    else if (!(dst.usage & U.COPY_DST)) error = 'destination usage lacks COPY_DST';
    else if (size % 4 || srcOffset % 4 || dstOffset % 4) error = 'size and offsets must be multiples of 4';
    else if (srcOffset + size > src.size) error = 'source range exceeds the buffer size';
    else if (dstOffset + size > dst.size) error = 'destination range exceeds the buffer size';
    else if (src === dst) error = 'source and destination are the same buffer';
    if (error) { encoderError(enc, `copyBufferToBuffer: ${error}`); return; }
    enc.list.commands.push({ op: 'copy', src, srcOffset, dst, dstOffset, size });
    useBuffer(enc.list, src);
    useBuffer(enc.list, dst);
  }

  clearBuffer(buffer, offset = 0, size = undefined) {
    const enc = native(this, 'commandEncoder');
    const b = arg(buffer, 'buffer', 'clearBuffer: buffer');
    offset = toSize(offset, 'clearBuffer offset');
    size = size === undefined ? Math.max(0, b.size - offset) : toSize(size, 'clearBuffer size');
    if (!encoderUsable(enc, 'clearBuffer')) return;
    let error = null;
    if (!b.valid) error = 'buffer is invalid';
    else if (!(b.usage & U.COPY_DST)) error = 'buffer usage lacks COPY_DST';
    else if (offset % 4 || size % 4) error = 'offset and size must be multiples of 4';
    else if (offset + size > b.size) error = 'range exceeds the buffer size';
    if (error) { encoderError(enc, `clearBuffer: ${error}`); return; }
    enc.list.commands.push({ op: 'clear', dst: b, dstOffset: offset, size });
    useBuffer(enc.list, b);
  }

  resolveQuerySet(querySet, firstQuery, queryCount, destination, destinationOffset) {
    const enc = native(this, 'commandEncoder');
    const qs = arg(querySet, 'querySet', 'resolveQuerySet: querySet');
    const dst = arg(destination, 'buffer', 'resolveQuerySet: destination');
    firstQuery = toSize(firstQuery, 'resolveQuerySet firstQuery');
    queryCount = toSize(queryCount, 'resolveQuerySet queryCount');
    destinationOffset = toSize(destinationOffset, 'resolveQuerySet destinationOffset');
    if (!encoderUsable(enc, 'resolveQuerySet')) return;
    let error = null;
    if (!qs.valid || !dst.valid) error = 'query set or buffer is invalid';
    else if (!(dst.usage & U.QUERY_RESOLVE)) error = 'destination usage lacks QUERY_RESOLVE';
    else if (firstQuery + queryCount > qs.count) error = 'query range exceeds the query set';
    else if (destinationOffset % 256) error = 'destinationOffset is not a multiple of 256';
    else if (destinationOffset + 8 * queryCount > dst.size) error = 'destination range exceeds the buffer size';
    if (error) { encoderError(enc, `resolveQuerySet: ${error}`); return; }
    enc.list.commands.push({ op: 'clear', dst, dstOffset: destinationOffset, size: 8 * queryCount });
    enc.list.usedQuerySets = enc.list.usedQuerySets || new Set();
    enc.list.usedQuerySets.add(qs);
    useBuffer(enc.list, dst);
  }

  pushDebugGroup(label) {
    const enc = native(this, 'commandEncoder');
    if (encoderUsable(enc, 'pushDebugGroup')) enc.debugDepth++;
    void label;
  }

  popDebugGroup() {
    const enc = native(this, 'commandEncoder');
    if (!encoderUsable(enc, 'popDebugGroup')) return;
    if (enc.debugDepth === 0) encoderError(enc, 'popDebugGroup: no debug group is open');
    else enc.debugDepth--;
  }

  insertDebugMarker(label) {
    encoderUsable(native(this, 'commandEncoder'), 'insertDebugMarker');
    void label;
  }

  finish(descriptor = {}) {
    const enc = native(this, 'commandEncoder');
    const dev = enc.device;
    const cb = makeNative('commandBuffer', dev, descriptor?.label);
    cb.list = null;
    cb.submitted = false;
    cb.dispatchCalls = enc.dispatchCalls;
    let error = null;
    if (enc.state === 'ended') error = 'the command encoder is already finished';
    else if (enc.state === 'locked') error = 'a pass is still open (end() was not called)';
    else if (enc.error) error = enc.error;
    else if (enc.debugDepth !== 0) error = 'unbalanced pushDebugGroup';
    const wasEnded = enc.state === 'ended';
    enc.state = 'ended';
    if (!wasEnded) registry.unregister(enc.token);
    const w = new GPUCommandBuffer(CONSTRUCT, cb);
    if (error) {
      cb.valid = false;
      validationError(dev, `finish: ${error}`);
      if (!wasEnded) releaseList(enc.list);
    } else {
      cb.list = enc.list;
      cb.token = {};
      registry.register(w, cb.list, cb.token);
    }
    enc.list = null;
    return w;
  }
}
defineLabel(GPUCommandEncoder);

function useBuffer(list, b) {
  list.usedBuffers.add(b);
  hold(list, b);
  recordUse(list, b);
}

export function createCommandEncoder(dev, descriptor) {
  const enc = makeNative('commandEncoder', dev, descriptor?.label);
  enc.state = 'open';
  enc.error = null;
  enc.debugDepth = 0;
  enc.dispatchCalls = 0; // dispatch calls made on its passes, valid or not (dispatches dropped when refused)
  enc.list = newList(dev);
  enc.token = {};
  const w = new GPUCommandEncoder(CONSTRUCT, enc);
  registry.register(w, enc.list, enc.token);
  return w;
}

// ---------------------------------------------------------------------------------------
// GPUComputePassEncoder

function passUsable(pass, what) {
  if (pass.state !== 'open' || pass.encoder.state !== 'locked') {
    validationError(pass.device, `${what}: the compute pass has ended`);
    return false;
  }
  return true;
}

export class GPUComputePassEncoder {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }

  setPipeline(pipeline) {
    const pass = native(this, 'computePass');
    const p = arg(pipeline, 'computePipeline', 'setPipeline: pipeline');
    if (!passUsable(pass, 'setPipeline')) return;
    if (!p.valid) { encoderError(pass.encoder, 'setPipeline: pipeline is invalid'); return; }
    if (p.device !== pass.device) { encoderError(pass.encoder, 'setPipeline: pipeline belongs to another device'); return; }
    pass.pipeline = p;
  }

  setBindGroup(index, bindGroup, dynamicOffsets = undefined, dynamicOffsetsDataStart = undefined, dynamicOffsetsDataLength = undefined) {
    const pass = native(this, 'computePass');
    const dev = pass.device;
    index = toSize(index, 'setBindGroup index', 0xffffffff);
    const bg = bindGroup === null || bindGroup === undefined ? null : arg(bindGroup, 'bindGroup', 'setBindGroup: bindGroup');
    let offsets = dynamicOffsets ?? [];
    if (dynamicOffsetsDataStart !== undefined) {
      const start = toSize(dynamicOffsetsDataStart, 'setBindGroup dynamicOffsetsDataStart');
      const length = toSize(dynamicOffsetsDataLength, 'setBindGroup dynamicOffsetsDataLength');
      if (start + length > offsets.length) throw new RangeError('setBindGroup: dynamic offsets data range exceeds the array');
      offsets = Array.prototype.slice.call(offsets, start, start + length);
    }
    if (!passUsable(pass, 'setBindGroup')) return;
    const enc = pass.encoder;
    if (index >= dev.limits.maxBindGroups) { encoderError(enc, `setBindGroup: index ${index} >= maxBindGroups`); return; }
    if (bg === null) { pass.bound[index] = null; return; }
    if (!bg.valid) { encoderError(enc, 'setBindGroup: bind group is invalid'); return; }
    if (bg.device !== dev) { encoderError(enc, 'setBindGroup: bind group belongs to another device'); return; }
    const dyn = bg.layout.dynamic;
    if (offsets.length !== dyn.length) {
      encoderError(enc, `setBindGroup: ${offsets.length} dynamic offsets given but the layout has ${dyn.length} dynamic bindings`);
      return;
    }
    for (let i = 0; i < dyn.length; i++) {
      const le = bg.layout.list[dyn[i]];
      const e = bg.entries[dyn[i]];
      const off = offsets[i] >>> 0;
      const align = le.type === 'uniform' ? dev.limits.minUniformBufferOffsetAlignment : dev.limits.minStorageBufferOffsetAlignment;
      if (off % align) { encoderError(enc, `setBindGroup: dynamic offset ${off} is not a multiple of ${align}`); return; }
      if (e.offset + off + e.size > e.buffer.size) { encoderError(enc, `setBindGroup: dynamic offset ${off} puts binding ${le.binding} out of the buffer`); return; }
    }
    pass.bound[index] = bg;
    hold(enc.list, bg);
    if (dev.options.retainWrappersUntilDone && !enc.list.released) enc.list.wrappers.push(bindGroup);
    if (pass.retained) pass.retained.add(bindGroup);
  }

  /**
   * Modeled immediates (WebGPU spec "setImmediates", shipped in Chrome 149–150; references.md,
   * "Remedies engines chose"): checked and recorded, never read (no shader runs here). The data
   * range is in elements for a TypedArray, in bytes otherwise, as writeBuffer's; a range outside
   * `data` throws OperationError; an offset or size not a multiple of 4, or past the device's
   * maxImmediateSize, invalidates the encoder.
   */
  setImmediates(rangeOffset, data, dataOffset = 0, size = undefined) {
    const pass = native(this, 'computePass');
    rangeOffset = toSize(rangeOffset, 'setImmediates rangeOffset', 0xffffffff);
    const view = ArrayBuffer.isView(data) && !(data instanceof DataView);
    const elem = view ? data.BYTES_PER_ELEMENT : 1;
    const total = (view ? data.length : data?.byteLength) ?? NaN;
    if (!Number.isFinite(total)) throw new TypeError('setImmediates: data is not a BufferSource');
    dataOffset = toSize(dataOffset, 'setImmediates dataOffset');
    const count = size === undefined ? total - dataOffset : toSize(size, 'setImmediates size');
    if (dataOffset > total || dataOffset + count > total) {
      throw domException('OperationError', `setImmediates: range [${dataOffset}, ${dataOffset + count}) exceeds the data (${total})`);
    }
    const bytes = count * elem;
    if (!passUsable(pass, 'setImmediates')) return;
    const max = pass.device.limits.maxImmediateSize ?? 0;
    if (rangeOffset % 4 || bytes % 4) { encoderError(pass.encoder, `setImmediates: offset ${rangeOffset} or size ${bytes} is not a multiple of 4`); return; }
    if (rangeOffset + bytes > max) { encoderError(pass.encoder, `setImmediates: [${rangeOffset}, ${rangeOffset + bytes}) exceeds maxImmediateSize ${max}`); return; }
    pass.device.ledger.immediatesSet++;
  }

  dispatchWorkgroups(x, y = 1, z = 1) {
    const pass = native(this, 'computePass');
    x = toSize(x, 'dispatchWorkgroups x', 0xffffffff);
    y = toSize(y, 'dispatchWorkgroups y', 0xffffffff);
    z = toSize(z, 'dispatchWorkgroups z', 0xffffffff);
    pass.encoder.dispatchCalls++;
    if (!passUsable(pass, 'dispatchWorkgroups')) return;
    const max = pass.device.limits.maxComputeWorkgroupsPerDimension;
    if (x > max || y > max || z > max) { encoderError(pass.encoder, `dispatchWorkgroups: a count exceeds maxComputeWorkgroupsPerDimension (${max})`); return; }
    validateDispatch(pass, 'dispatchWorkgroups');
  }

  dispatchWorkgroupsIndirect(indirectBuffer, indirectOffset) {
    const pass = native(this, 'computePass');
    const b = arg(indirectBuffer, 'buffer', 'dispatchWorkgroupsIndirect: indirectBuffer');
    indirectOffset = toSize(indirectOffset, 'dispatchWorkgroupsIndirect indirectOffset');
    pass.encoder.dispatchCalls++;
    if (!passUsable(pass, 'dispatchWorkgroupsIndirect')) return;
    let error = null;
    if (!b.valid) error = 'indirect buffer is invalid';
    else if (!(b.usage & U.INDIRECT)) error = 'indirect buffer usage lacks INDIRECT';
    else if (indirectOffset % 4) error = 'indirectOffset is not a multiple of 4';
    else if (indirectOffset + 12 > b.size) error = 'indirect range exceeds the buffer size';
    if (error) { encoderError(pass.encoder, `dispatchWorkgroupsIndirect: ${error}`); return; }
    if (validateDispatch(pass, 'dispatchWorkgroupsIndirect')) useBuffer(pass.encoder.list, b);
  }

  pushDebugGroup(label) {
    const pass = native(this, 'computePass');
    if (passUsable(pass, 'pushDebugGroup')) pass.debugDepth++;
    void label;
  }

  popDebugGroup() {
    const pass = native(this, 'computePass');
    if (!passUsable(pass, 'popDebugGroup')) return;
    if (pass.debugDepth === 0) encoderError(pass.encoder, 'popDebugGroup: no debug group is open');
    else pass.debugDepth--;
  }

  insertDebugMarker(label) {
    passUsable(native(this, 'computePass'), 'insertDebugMarker');
    void label;
  }

  end() {
    const pass = native(this, 'computePass');
    if (!passUsable(pass, 'end')) return;
    pass.state = 'ended';
    pass.encoder.state = 'open';
    if (pass.debugDepth !== 0) encoderError(pass.encoder, 'end: unbalanced pushDebugGroup in the pass');
    pass.bound = [];
    pass.pipeline = null;
  }
}
defineLabel(GPUComputePassEncoder);

function validateDispatch(pass, what) {
  const enc = pass.encoder;
  const p = pass.pipeline;
  if (!p) { encoderError(enc, `${what}: no pipeline is set`); return false; }
  const groups = p.layout.groups;
  for (let i = 0; i < groups.length; i++) {
    const want = groups[i];
    if (!want) continue;
    const bg = pass.bound[i];
    if (!bg) { encoderError(enc, `${what}: no bind group is set at index ${i}`); return false; }
    if (!layoutsCompatible(bg.layout, want)) {
      encoderError(enc, `${what}: the bind group at index ${i} is not compatible with the pipeline's layout`);
      return false;
    }
  }
  const list = enc.list;
  for (let i = 0; i < groups.length; i++) {
    const bg = pass.bound[i];
    if (!bg) continue;
    list.usedBindGroups.add(bg);
    if (list.device.model.bufferRecordsEncoders) for (const b of bg.buffers) recordUse(list, b);
  }
  list.dispatches++;
  return true;
}

// ---------------------------------------------------------------------------------------
// GPUCommandBuffer

export class GPUCommandBuffer {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }
}
defineLabel(GPUCommandBuffer);

// ---------------------------------------------------------------------------------------
// GPUQueue

/** Queue state on the device timeline; completion of submitted work is modeled by serials. */
export class NativeQueue {
  constructor(dev) {
    this.kind = 'queue';
    this.device = dev;
    this.label = '';
    this.valid = true;
    this.submitted = 0; // serial of the last submit
    this.completed = 0; // serial of the last completed submit
    this.inflight = []; // [{serial, lists}]
    this.waiters = []; // [{serial, resolve}]
  }

  /** Promise resolved (in a later task) once work up to `serial` is done. */
  whenDone(serial) {
    return new Promise((resolve) => {
      if (serial <= this.completed) afterTask(resolve);
      else this.waiters.push({ serial, resolve });
    });
  }

  completeUpTo(serial) {
    const ledger = this.device.ledger;
    while (this.inflight.length && this.inflight[0].serial <= serial) {
      const work = this.inflight.shift();
      for (const list of work.lists) releaseList(list);
      ledger.commandBuffersInFlight -= work.lists.length;
      this.completed = work.serial;
    }
    if (serial > this.completed && serial <= this.submitted) this.completed = serial;
    const ready = this.waiters.filter((w) => w.serial <= this.completed);
    this.waiters = this.waiters.filter((w) => w.serial > this.completed);
    for (const w of ready) w.resolve(undefined);
  }

  scheduleCompletion(serial) {
    const mode = this.device.options.completion ?? 'task';
    if (mode === 'manual') return;
    const done = () => this.completeUpTo(serial);
    if (mode === 'task') afterTask(done);
    else if (mode === 'microtask') queueMicrotask(done);
    else if (typeof mode === 'number') setTimeout(done, mode);
    else if (mode && typeof mode.delayMs === 'number') setTimeout(done, mode.delayMs);
    else afterTask(done);
  }
}

function executeList(list, contentsEnabled) {
  if (!contentsEnabled) return;
  for (const c of list.commands) {
    if (c.op === 'copy') {
      if (c.src.contents !== null) {
        ensureContents(c.dst).set(c.src.contents.subarray(c.srcOffset, c.srcOffset + c.size), c.dstOffset);
      } else if (c.dst.contents !== null) {
        c.dst.contents.fill(0, c.dstOffset, c.dstOffset + c.size);
      }
    } else if (c.op === 'clear') {
      if (c.dst.contents !== null) c.dst.contents.fill(0, c.dstOffset, c.dstOffset + c.size);
    }
  }
}

export class GPUQueue {
  constructor(token, n) { illegalConstructor(token); this[INTERNAL] = n; }

  submit(commandBuffers) {
    const q = native(this, 'queue');
    const dev = q.device;
    if (commandBuffers == null || typeof commandBuffers[Symbol.iterator] !== 'function') {
      throw new TypeError('submit: commandBuffers is not a sequence');
    }
    const cbs = [];
    for (const w of commandBuffers) cbs.push(arg(w, 'commandBuffer', 'submit: element'));
    let error = null;
    const seen = new Set();
    for (const cb of cbs) {
      if (seen.has(cb)) { error = 'the same command buffer appears twice'; break; }
      seen.add(cb);
      if (cb.submitted) { error = 'a command buffer was already submitted'; break; }
      if (!cb.valid) { error = 'a command buffer is invalid'; break; }
      if (cb.device !== dev) { error = 'a command buffer belongs to another device'; break; }
      error = checkBuffersAvailable(cb.list);
      if (error) break;
    }
    for (const cb of cbs) {
      if (cb.token) registry.unregister(cb.token);
      cb.valid = false;
      cb.submitted = true;
    }
    const lists = cbs.map((cb) => cb.list).filter(Boolean);
    for (const cb of cbs) cb.list = null;
    if (error) {
      for (const list of lists) releaseList(list);
      // the consequence an application that keeps going never sees: none of this work runs
      dev.ledger.commandBuffersRejected += cbs.length;
      for (const cb of cbs) dev.ledger.dispatchesDropped += cb.dispatchCalls ?? 0;
      validationError(dev, `submit: ${error}`);
      return;
    }
    if (dev.lost) { for (const list of lists) releaseList(list); return; }
    const contentsEnabled = dev.options.contents !== 'none';
    for (const list of lists) executeList(list, contentsEnabled);
    const serial = ++q.submitted;
    q.inflight.push({ serial, lists });
    dev.ledger.submits++;
    dev.ledger.commandBuffersInFlight += lists.length;
    q.scheduleCompletion(serial);
  }

  writeBuffer(buffer, bufferOffset, data, dataOffset = 0, size = undefined) {
    const q = native(this, 'queue');
    const dev = q.device;
    const b = arg(buffer, 'buffer', 'writeBuffer: buffer');
    bufferOffset = toSize(bufferOffset, 'writeBuffer bufferOffset');
    let bytes;
    let elementSize = 1;
    if (data instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && data instanceof SharedArrayBuffer)) {
      bytes = new Uint8Array(data);
    } else if (ArrayBuffer.isView(data)) {
      bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      if (!(data instanceof DataView)) elementSize = data.BYTES_PER_ELEMENT;
    } else {
      throw new TypeError('writeBuffer: data is not an ArrayBuffer or ArrayBufferView');
    }
    const dataLength = bytes.byteLength / elementSize;
    dataOffset = toSize(dataOffset, 'writeBuffer dataOffset');
    if (dataOffset > dataLength) throw domException('OperationError', 'writeBuffer: dataOffset is past the end of data');
    const count = size === undefined ? dataLength - dataOffset : toSize(size, 'writeBuffer size');
    if (dataOffset + count > dataLength) throw domException('OperationError', 'writeBuffer: dataOffset + size exceeds data');
    const byteCount = count * elementSize;
    if (byteCount % 4) throw domException('OperationError', 'writeBuffer: size in bytes is not a multiple of 4');
    let error = null;
    if (!b.valid) error = 'buffer is invalid';
    else if (b.device !== dev) error = 'buffer belongs to another device';
    else if (b.state !== 'available') error = b.state === 'destroyed' ? 'buffer is destroyed' : 'buffer is mapped or has a pending map';
    else if (!(b.usage & U.COPY_DST)) error = 'buffer usage lacks COPY_DST';
    else if (bufferOffset % 4) error = 'bufferOffset is not a multiple of 4';
    else if (bufferOffset + byteCount > b.size) error = 'write range exceeds the buffer size';
    if (error) { validationError(dev, `writeBuffer: ${error}`); return; }
    if (dev.lost || byteCount === 0 || dev.options.contents === 'none') return;
    const start = dataOffset * elementSize;
    ensureContents(b).set(bytes.subarray(start, start + byteCount), bufferOffset);
  }

  writeTexture() {
    throw domException('NotSupportedError', 'webgpu-emulated: textures are not emulated');
  }

  copyExternalImageToTexture() {
    throw domException('NotSupportedError', 'webgpu-emulated: textures are not emulated');
  }

  onSubmittedWorkDone() {
    const q = native(this, 'queue');
    return q.whenDone(q.submitted);
  }
}
defineLabel(GPUQueue);

function checkBuffersAvailable(list) {
  for (const b of list.usedBuffers) {
    if (b.state === 'destroyed') return 'a buffer used by the command buffer is destroyed';
    if (b.state !== 'available') return 'a buffer used by the command buffer is mapped';
  }
  for (const bg of list.usedBindGroups) {
    for (const b of bg.buffers) {
      if (b.state === 'destroyed') return 'a buffer in a bind group used by the command buffer is destroyed';
      if (b.state !== 'available') return 'a buffer in a bind group used by the command buffer is mapped';
    }
  }
  if (list.usedQuerySets) for (const qs of list.usedQuerySets) if (qs.destroyed) return 'a query set used by the command buffer is destroyed';
  return null;
}
