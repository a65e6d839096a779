/**
 * bind-group-cache.js: a bounded cache behind GPUDevice.prototype.createBindGroup.
 * Over 400 lines on purpose: one drop-in file (the cache and the reuse-distance stack that measures
 * its working set), so an application copies a single module.
 *
 * Drop-in ES module for any page or worker (no harness imports):
 *
 *   import {installBindGroupCache} from './bind-group-cache.js';
 *   const cache = installBindGroupCache({maxEntries: 4096});  // before the engine creates bind groups
 *   ... cache.stats() -> {hits, misses, evictions, size, maxEntries, ...}; cache.uninstall();
 *   ... cache.reuseDistances() -> {lookups, cold, distances: [[d, n], ...]}; cache.takeWindow()
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
 * Working set (reuse distances): every lookup is also placed in an LRU stack of keys (Mattson,
 *   Gecsei, Slutz, Traiger 1970, "Evaluation techniques for storage hierarchies": an LRU cache of C
 *   entries holds exactly the C most recently used keys, so a lookup hits in every cache larger
 *   than the number of distinct keys used since its key's last use). reuse() returns the
 *   histogram of those distances and the first-time (cold) lookups, so one run gives the hit
 *   rate at every capacity: hit(C) = lookups at distance < C ÷ lookups. Keys whose buffer was
 *   destroyed or collected, or whose device was destroyed, leave the stack as they leave the
 *   cache (they can never recur: a buffer id is never reused); entries evicted for capacity stay
 *   in it. takeWindow() returns the lookups, distinct keys and cold keys since its last call (one
 *   token, when called at each token's end). Cost: O(log n) per lookup (a Fenwick tree over
 *   access times), n = distinct live keys.
 *
 * A hit returns a bind group created for an earlier, equal descriptor: its label is the first one,
 * and a descriptor that failed validation yields the same invalid bind group again (the error is
 * reported once). uninstall() restores the methods found at install time, so wrappers installed
 * on top of this one afterwards are dropped too.
 */

const SIZE_REST = 'rest';

let installed = null;

/**
 * LRU stack distances of a sequence of keys (strings). access(key) returns the number of distinct
 * other keys accessed since `key` was last accessed (0: accessed just before), or -1 the first
 * time; remove(key) takes a key out of the stack (it will not recur). Distances are kept as a
 * histogram. A Fenwick tree over access times marks each live key's last access; the times are
 * renumbered when the tree fills, so memory stays proportional to the live keys.
 */
export class ReuseDistances {
  constructor() {
    this.last = new Map(); // key -> time of its last access (1-based)
    this.size = 1024;
    this.tree = new Int32Array(this.size + 1);
    this.time = 0;
    this.histogram = new Map(); // distance -> lookups
    this.lookups = 0;
    this.cold = 0;
  }

  _add(i, delta) {
    for (; i <= this.size; i += i & -i) this.tree[i] += delta;
  }

  _prefix(i) {
    let sum = 0;
    for (; i > 0; i -= i & -i) sum += this.tree[i];
    return sum;
  }

  /** Renumber the live keys' times 1..n in order, into a tree twice as large as needed. */
  _compact() {
    const keys = [...this.last.entries()].sort((a, b) => a[1] - b[1]);
    this.size = Math.max(1024, 2 * keys.length + 2);
    this.tree = new Int32Array(this.size + 1);
    keys.forEach(([key], i) => {
      this.last.set(key, i + 1);
      this.tree[i + 1] += 1;
    });
    for (let i = 1; i <= this.size; i++) { // linear Fenwick build
      const j = i + (i & -i);
      if (j <= this.size) this.tree[j] += this.tree[i];
    }
    this.time = keys.length;
  }

  /** Record one lookup of `key`; returns its distance, or -1 for a first lookup. */
  access(key) {
    if (this.time >= this.size) this._compact();
    this.lookups += 1;
    const t = this.last.get(key);
    let distance = -1;
    if (t === undefined) {
      this.cold += 1;
    } else {
      distance = this._prefix(this.time) - this._prefix(t);
      this._add(t, -1);
      this.histogram.set(distance, (this.histogram.get(distance) ?? 0) + 1);
    }
    this.time += 1;
    this._add(this.time, 1);
    this.last.set(key, this.time);
    return distance;
  }

  /** Take `key` out of the stack (its buffer or device is gone for good). */
  remove(key) {
    const t = this.last.get(key);
    if (t === undefined) return;
    this._add(t, -1);
    this.last.delete(key);
  }

  /** {lookups, cold, distances: [[distance, lookups], ...] by distance, keys (live in the stack)}. */
  snapshot() {
    const distances = [...this.histogram.entries()].sort((a, b) => a[0] - b[0]);
    return {lookups: this.lookups, cold: this.cold, distances, keys: this.last.size};
  }
}

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
  const reuse = new ReuseDistances();
  const keysSeen = new Map(); // key -> {deviceId, bufferIds}: every key in the reuse stack
  const seenByBuffer = new Map(); // buffer id -> Set of keys in the reuse stack
  let window = {lookups: 0, keys: new Set(), cold: 0};

  /** A key gone for good (its buffer destroyed or collected, its device destroyed). */
  function forget(key) {
    const seen = keysSeen.get(key);
    if (!seen) return;
    keysSeen.delete(key);
    reuse.remove(key);
    for (const id of seen.bufferIds) {
      const keys = seenByBuffer.get(id);
      if (keys) {
        keys.delete(key);
        if (keys.size === 0) seenByBuffer.delete(id);
      }
    }
  }

  function forgetBuffer(id) {
    for (const key of [...(seenByBuffer.get(id) ?? [])]) forget(key);
  }

  function looked(key, deviceId, ids) {
    const distance = reuse.access(key);
    window.lookups += 1;
    window.keys.add(key);
    if (distance < 0) {
      window.cold += 1;
      keysSeen.set(key, {deviceId, bufferIds: ids});
      for (const id of ids) {
        let keys = seenByBuffer.get(id);
        if (!keys) seenByBuffer.set(id, (keys = new Set()));
        keys.add(key);
      }
    }
  }

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

  const registry = new FinalizationRegistry((id) => {
    evictBuffer(id, 'evictedCollected');
    forgetBuffer(id);
  });

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
    looked(key, objectIds.get(this), ids);
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
    if (bufferIds.has(this)) {
      evictBuffer(bufferIds.get(this), 'evictedDestroyed');
      forgetBuffer(bufferIds.get(this));
    }
    return proto.bufferDestroy.apply(this, args);
  }

  function deviceDestroy(...args) {
    if (objectIds.has(this)) {
      const id = objectIds.get(this);
      for (const [key, entry] of [...entries]) {
        if (entry.deviceId === id) removeEntry(key, 'evictedDevice');
      }
      for (const [key, seen] of [...keysSeen]) if (seen.deviceId === id) forget(key);
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

  /** The reuse-distance histogram so far (ReuseDistances.snapshot): the hit rate at every capacity. */
  function reuseDistances() {
    return reuse.snapshot();
  }

  /** {lookups, distinctKeys, coldKeys} since the last call (call it at each token's end). */
  function takeWindow() {
    const w = {lookups: window.lookups, distinctKeys: window.keys.size, coldKeys: window.cold};
    window = {lookups: 0, keys: new Set(), cold: 0};
    return w;
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
    keysSeen.clear();
    seenByBuffer.clear();
    installed = null;
  }

  const handle = {stats, uninstall, clear, reuseDistances, takeWindow};
  installed = {handle};
  return handle;
}

/**
 * Steps at whose end a workload snapshots the reuse distances (reuseDistances()) for its result:
 * the first step (the warm-up) and the one before the last half of `steps`.
 */
export function reuseSnapshotSteps(steps) {
  return [...new Set([0, Math.ceil(steps / 2) - 1])].filter((s) => s >= 0 && s < steps - 1);
}

/**
 * A cache's reuse distances for a run's result: {snapshots: [{step, lookups, cold, distances}]
 * (taken at the end of those steps: reuseSnapshotSteps), atEnd, maxEntries}. The harness
 * (harness/stats/workloads/cache_working_set.py) subtracts a snapshot from atEnd and turns the
 * lookups after it into the hit rate at every capacity.
 */
export function reuseResult(snapshots, cache) {
  return {snapshots, atEnd: cache.reuseDistances(), maxEntries: cache.stats().maxEntries};
}

/** Stats of the installed cache, or null when none is installed. */
export function stats() {
  return installed ? installed.handle.stats() : null;
}

/** Restore the original WebGPU methods and drop every cached bind group. */
export function uninstall() {
  if (installed) installed.handle.uninstall();
}
