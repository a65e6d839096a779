// The `reuse` variant's bind group cache, inside the workload: the fix asked for in the
// onnxruntime field report
// (shared/references.md: "cache bind groups keyed on (layout/program, and per entry buffer,
// offset, size), dropping entries when a buffer goes back for good"). Not to be confused with
// workloads/lib/bind-group-cache.js, the shim behind GPUDevice.createBindGroup that ort-decode's
// `bind-group-cache` variant installs under onnxruntime-web.
//
// Key: the pipeline's bind group layout id, then per entry binding:bufferId@offset+size. Entries
// always bind offset 0 and the whole buffer, as the ORT WebGPU EP does. dropBuffer() is wired to
// the storage buffer cache's destroy path, so no cached bind group outlives one of its buffers.

export class BindGroupReuseCache {
  /** `evicts` false (bind_group_cache=never): dropBuffer() keeps every entry — the unbounded cache
   *  pixi.js and Defold shipped (shared/references.md), for the analysis to name. */
  constructor(device, ids, evicts = true) {
    this.device = device;
    this.ids = ids;
    this.evicts = evicts;
    this.groups = new Map();
    this.keysByBuffer = new Map(); // buffer id -> Set(keys)
    this.stats = { hits: 0, misses: 0, dropped: 0 };
  }

  /** The bind group for (layout, buffers); creates one only on a miss. */
  get(layout, layoutId, buffers, label) {
    let key = String(layoutId);
    for (let i = 0; i < buffers.length; i++) key += `|${i}:${this.ids.get(buffers[i])}@0+${buffers[i].size}`;
    const hit = this.groups.get(key);
    if (hit) {
      this.stats.hits += 1;
      return hit;
    }
    this.stats.misses += 1;
    const group = this.device.createBindGroup({
      label, layout, entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    this.groups.set(key, group);
    for (const buffer of buffers) {
      const id = this.ids.get(buffer);
      if (!this.keysByBuffer.has(id)) this.keysByBuffer.set(id, new Set());
      this.keysByBuffer.get(id).add(key);
    }
    return group;
  }

  /** Forget every bind group that binds `buffer` (called before the buffer is destroyed). */
  dropBuffer(buffer) {
    if (!this.evicts) return;
    const id = this.ids.get(buffer);
    const keys = this.keysByBuffer.get(id);
    if (!keys) return;
    for (const key of keys) {
      if (this.groups.delete(key)) this.stats.dropped += 1;
    }
    this.keysByBuffer.delete(id);
  }

  get size() {
    return this.groups.size;
  }
}
