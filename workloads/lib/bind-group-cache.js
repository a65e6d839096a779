/**
 * bind-group-cache.js: a bounded cache behind GPUDevice.prototype.createBindGroup.
 *
 * Drop-in ES module for any page or worker (no harness imports):
 *
 *   import {installBindGroupCache} from './bind-group-cache.js';
 *   const cache = installBindGroupCache({maxEntries: 4096});  // before the engine creates bind groups
 *   ... cache.stats() -> {hits, misses, evictions, size, maxEntries, ...}; cache.uninstall();
 *
 * Why: onnxruntime-web's WebGPU execution provider creates a new GPUBindGroup for every dispatch
 * (~300 per generated token) although a node binds the same buffers again on the next token; on
 * Safari those bind groups are freed only when their wrappers are garbage-collected, which a worker
 * running ORT rarely triggers, so they pile up until the page is killed (shared/references.md,
 * "onnxruntime field report" and "Bind group lifetime in the engines"). The fix asked there is this
 * cache, keyed on the layout and on each entry's buffer, offset and size.
 *
 * Key: device id | layout id | for each entry in binding order: binding, then
 *   - buffer binding (GPUBufferBinding or a bare GPUBuffer): buffer id, offset (default 0), size
 *     (or "rest" when omitted);
 *   - GPUSampler, GPUTextureView or GPUTexture: the object's id (identity).
 *   Ids are small integers handed out through WeakMaps, so a key is a string that keeps nothing
 *   alive. A layout that came from pipeline.getBindGroupLayout(i) ('auto' layouts; onnxruntime's JS
 *   EP asks for it on every run, and each call returns a new wrapper of the same internal layout)
 *   gets the id "pipeline id:i", so equal layouts share entries.
 *   A descriptor with anything else (GPUExternalTexture: it expires each frame; unknown resource
 *   kinds) bypasses the cache and is counted in `bypassed`.
 *
 * Bound: at most maxEntries cached bind groups, least recently used evicted first (a Map in
 *   insertion order; a hit moves the entry to the end). An entry also goes when any buffer it binds
 *   is destroyed (GPUBuffer.prototype.destroy is wrapped) or collected (a FinalizationRegistry on
 *   every buffer seen: onnxruntime's C++ EP releases buffers without calling destroy(),
 *   shared/references.md "onnxruntime WebGPU EP internals"), and all entries of a device go when
 *   GPUDevice.prototype.destroy is called. The cached GPUBindGroup objects are the only strong
 *   references held; they keep the underlying GPU resources of their buffers alive, which is why
 *   entries must go when a buffer goes.
 *
 * Failure mode it avoids: a cache keyed on values that keep changing (e.g. a fresh uniform buffer
 *   or a new offset every dispatch) and never bounded grows by one bind group per dispatch forever,
 *   which is the leak it was meant to cure, only slower to collect. Here the LRU cap bounds it and
 *   `evictions` climbing together with `misses` shows that keys are not repeating.
 *
 * A hit returns a bind group created for an earlier, equal descriptor: its label is the first one,
 * and a descriptor that failed validation yields the same invalid bind group again (the error is
 * reported once). uninstall() restores the methods found at install time, so wrappers installed
 * on top of this one afterwards are dropped too.
 */

const SIZE_REST = 'rest';

let installed = null;

/** Ids for objects, held weakly. */
class IdTable {
  constructor() {
    this.ids = new WeakMap();
    this.next = 1;
  }
  has(obj) {
    return this.ids.has(obj);
  }
  get(obj) {
    let id = this.ids.get(obj);
    if (id === undefined) {
      id = this.next++;
      this.ids.set(obj, id);
    }
    return id;
  }
  set(obj, id) {
    this.ids.set(obj, id);
  }
}

function isInstance(value, ctorName) {
  const ctor = globalThis[ctorName];
  return typeof ctor === 'function' && value instanceof ctor;
}

/**
 * Wrap GPUDevice.prototype.createBindGroup with the cache (idempotent: a second call returns the
 * installed cache). Returns {stats, uninstall, clear}.
 */
export function installBindGroupCache({maxEntries = 4096} = {}) {
  if (installed) return installed.handle;
  if (typeof GPUDevice === 'undefined' || typeof GPUBuffer === 'undefined') {
    throw new Error('installBindGroupCache: WebGPU (GPUDevice, GPUBuffer) is not available here');
  }
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new Error(`installBindGroupCache: maxEntries must be a positive integer, got ${maxEntries}`);
  }

  const objectIds = new IdTable(); // devices, layouts, samplers, texture views, textures, pipelines
  const bufferIds = new IdTable();
  const entries = new Map(); // key -> {bindGroup, deviceId, bufferIds: number[]}
  const keysByBuffer = new Map(); // buffer id -> Set of keys
  const counters = {hits: 0, misses: 0, evictions: 0, bypassed: 0,
                    evictedLru: 0, evictedDestroyed: 0, evictedCollected: 0, evictedDevice: 0};

  function removeEntry(key, reason) {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    for (const id of entry.bufferIds) {
      const keys = keysByBuffer.get(id);
      if (keys) {
        keys.delete(key);
        if (keys.size === 0) keysByBuffer.delete(id);
      }
    }
    counters.evictions++;
    counters[reason]++;
  }

  function evictBuffer(id, reason) {
    const keys = keysByBuffer.get(id);
    if (!keys) return;
    for (const key of [...keys]) removeEntry(key, reason);
    keysByBuffer.delete(id);
  }

  const registry = new FinalizationRegistry((id) => evictBuffer(id, 'evictedCollected'));

  function bufferId(buffer) {
    if (!bufferIds.has(buffer)) registry.register(buffer, bufferIds.get(buffer));
    return bufferIds.get(buffer);
  }

  const proto = {
    createBindGroup: GPUDevice.prototype.createBindGroup,
    bufferDestroy: GPUBuffer.prototype.destroy,
    deviceDestroy: GPUDevice.prototype.destroy,
    computeGetLayout: globalThis.GPUComputePipeline?.prototype.getBindGroupLayout,
    renderGetLayout: globalThis.GPURenderPipeline?.prototype.getBindGroupLayout,
  };

  /** Returns [key, buffer ids] or null when the descriptor cannot be cached. */
  function keyOf(device, descriptor) {
    const layout = descriptor?.layout;
    if (!layout || typeof layout !== 'object') return null;
    const list = Array.from(descriptor.entries ?? []);
    list.sort((a, b) => a.binding - b.binding);
    const parts = [objectIds.get(device), objectIds.get(layout)];
    const ids = [];
    for (const entry of list) {
      const r = entry.resource;
      if (r === null || typeof r !== 'object') return null;
      let buffer = null;
      let offset = 0;
      let size = SIZE_REST;
      if (r instanceof GPUBuffer) {
        buffer = r;
      } else if (r.buffer instanceof GPUBuffer) {
        buffer = r.buffer;
        offset = r.offset ?? 0;
        size = r.size ?? SIZE_REST;
      }
      if (buffer) {
        const id = bufferId(buffer);
        ids.push(id);
        parts.push(`${entry.binding}:b${id}@${offset}+${size}`);
      } else if (isInstance(r, 'GPUSampler') || isInstance(r, 'GPUTextureView') ||
                 isInstance(r, 'GPUTexture')) {
        parts.push(`${entry.binding}:o${objectIds.get(r)}`);
      } else {
        return null; // GPUExternalTexture or a resource kind this module does not know
      }
    }
    return [parts.join('|'), ids];
  }

  function createBindGroup(descriptor) {
    const keyed = keyOf(this, descriptor);
    if (!keyed) {
      counters.bypassed++;
      return proto.createBindGroup.call(this, descriptor);
    }
    const [key, ids] = keyed;
    const hit = entries.get(key);
    if (hit) {
      counters.hits++;
      entries.delete(key); // move to the most recently used end
      entries.set(key, hit);
      return hit.bindGroup;
    }
    counters.misses++;
    const bindGroup = proto.createBindGroup.call(this, descriptor);
    entries.set(key, {bindGroup, deviceId: objectIds.get(this), bufferIds: ids});
    for (const id of ids) {
      let keys = keysByBuffer.get(id);
      if (!keys) keysByBuffer.set(id, (keys = new Set()));
      keys.add(key);
    }
    while (entries.size > maxEntries) removeEntry(entries.keys().next().value, 'evictedLru');
    return bindGroup;
  }

  function bufferDestroy(...args) {
    if (bufferIds.has(this)) evictBuffer(bufferIds.get(this), 'evictedDestroyed');
    return proto.bufferDestroy.apply(this, args);
  }

  function deviceDestroy(...args) {
    if (objectIds.has(this)) {
      const id = objectIds.get(this);
      for (const [key, entry] of [...entries]) {
        if (entry.deviceId === id) removeEntry(key, 'evictedDevice');
      }
    }
    return proto.deviceDestroy.apply(this, args);
  }

  function layoutGetter(original) {
    return function getBindGroupLayout(index) {
      const layout = original.call(this, index);
      if (layout && typeof layout === 'object' && !objectIds.has(layout)) {
        objectIds.set(layout, `p${objectIds.get(this)}:${index}`);
      }
      return layout;
    };
  }

  GPUDevice.prototype.createBindGroup = createBindGroup;
  GPUBuffer.prototype.destroy = bufferDestroy;
  GPUDevice.prototype.destroy = deviceDestroy;
  if (proto.computeGetLayout) GPUComputePipeline.prototype.getBindGroupLayout = layoutGetter(proto.computeGetLayout);
  if (proto.renderGetLayout) GPURenderPipeline.prototype.getBindGroupLayout = layoutGetter(proto.renderGetLayout);

  function stats() {
    return {...counters, size: entries.size, maxEntries, buffersTracked: keysByBuffer.size};
  }

  function clear() {
    for (const key of [...entries.keys()]) removeEntry(key, 'evictedLru');
  }

  function uninstall() {
    if (installed?.handle !== handle) return;
    GPUDevice.prototype.createBindGroup = proto.createBindGroup;
    GPUBuffer.prototype.destroy = proto.bufferDestroy;
    GPUDevice.prototype.destroy = proto.deviceDestroy;
    if (proto.computeGetLayout) GPUComputePipeline.prototype.getBindGroupLayout = proto.computeGetLayout;
    if (proto.renderGetLayout) GPURenderPipeline.prototype.getBindGroupLayout = proto.renderGetLayout;
    entries.clear();
    keysByBuffer.clear();
    installed = null;
  }

  const handle = {stats, uninstall, clear};
  installed = {handle};
  return handle;
}

/** Stats of the installed cache, or null when none is installed. */
export function stats() {
  return installed ? installed.handle.stats() : null;
}

/** Restore the original WebGPU methods and drop every cached bind group. */
export function uninstall() {
  if (installed) installed.handle.uninstall();
}
