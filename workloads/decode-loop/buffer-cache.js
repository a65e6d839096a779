// Buffer caches modelled on the ORT WebGPU EP's BufferManager
// (onnxruntime/core/providers/webgpu/buffer_manager.cc; shared/references.md, "onnxruntime WebGPU
// EP internals").
//
// Both caches hand out buffers with acquire(), take them back with release() into a pending
// list, and move pending buffers to the free lists in refresh(), which the executor calls right
// after each GPUQueue.submit (WebGpuContext::Flush → BufferManager::RefreshPendingBuffers).
// Every buffer either cache creates gets a creation id (`ids`), used by the bind group cache.

/**
 * Storage buffer cache, mode `bucket`: a request is rounded up to the next of 26 bucket sizes
 * (64 B … 160 MiB; larger requests to a multiple of 16 B and never cached); each bucket has a free
 * list and a limit; a refreshed buffer whose bucket is full is destroyed (ORT releases it).
 *
 * pop: which free buffer acquire() returns.
 *   'lifo'   — the last one pushed, as ORT's std::vector::back() does.
 *   'oldest' — the one created first (lowest creation id). ORT's LIFO order depends on the order
 *              in which buffers came back during the previous token, so a node may get a
 *              different buffer on token 1 than on token 0. With 'oldest', a node gets the same
 *              buffer on every token: at any point of a token, every free buffer the node could
 *              have had on token 0 is older than every buffer token 0 had yet to create.
 */
export class BucketBufferCache {
  // BUCKET_DEFAULT_LIMIT_TABLE in buffer_manager.cc: [bucket size in bytes, free-list limit].
  static BUCKET_LIMITS = [
    [64, 250], [128, 200], [256, 200], [512, 200], [2048, 230], [4096, 200], [8192, 50],
    [16384, 50], [32768, 50], [65536, 50], [131072, 50], [262144, 50], [524288, 50],
    [1048576, 50], [2097152, 30], [4194304, 20], [8388608, 10], [12582912, 10], [16777216, 10],
    [26214400, 15], [33554432, 22], [44236800, 2], [58982400, 6], [67108864, 6],
    [134217728, 6], [167772160, 6],
  ];

  constructor(device, { pop = 'oldest', ids, onDestroy = () => {} } = {}) {
    if (pop !== 'lifo' && pop !== 'oldest') throw new Error(`buffer_cache_pop must be 'lifo' or 'oldest' (got ${pop})`);
    this.device = device;
    this.pop = pop;
    this.ids = ids;
    this.onDestroy = onDestroy;
    this.free = new Map(BucketBufferCache.BUCKET_LIMITS.map(([size]) => [size, []]));
    this.limits = new Map(BucketBufferCache.BUCKET_LIMITS);
    this.pending = [];
    this.all = new Set();
    this.stats = { created: 0, reused: 0, destroyed: 0 };
  }

  /** Bucket size for a request (BucketCacheManager::CalculateBufferSize). */
  static bucketBytes(requestBytes) {
    for (const [size] of BucketBufferCache.BUCKET_LIMITS) if (size >= requestBytes) return size;
    return Math.ceil(requestBytes / 16) * 16;
  }

  acquire(requestBytes, usage, label) {
    const size = BucketBufferCache.bucketBytes(requestBytes);
    const list = this.free.get(size);
    if (list && list.length) {
      let i = list.length - 1;
      if (this.pop === 'oldest') {
        for (let j = 0; j < list.length; j++) if (this.ids.get(list[j]) < this.ids.get(list[i])) i = j;
      }
      const [buffer] = list.splice(i, 1);
      if ((buffer.usage & usage) !== usage) throw new Error('cached buffer has a different usage');
      this.stats.reused += 1;
      return buffer;
    }
    const buffer = this.device.createBuffer({ size, usage, label });
    this.ids.assign(buffer);
    this.all.add(buffer);
    this.stats.created += 1;
    return buffer;
  }

  release(buffer) {
    this.pending.push(buffer);
  }

  /** After a submit: pending buffers go back to their bucket, or are destroyed if it is full. */
  refresh() {
    for (const buffer of this.pending) {
      const list = this.free.get(buffer.size);
      if (list && list.length < this.limits.get(buffer.size)) list.push(buffer);
      else this.destroy(buffer);
    }
    this.pending.length = 0;
  }

  destroy(buffer) {
    this.onDestroy(buffer);
    this.all.delete(buffer);
    buffer.destroy();
    this.stats.destroyed += 1;
  }

  /** Destroy every buffer this cache created (end of run). */
  destroyAll() {
    for (const buffer of [...this.all]) this.destroy(buffer);
    for (const list of this.free.values()) list.length = 0;
    this.pending.length = 0;
  }

  /** Number of free buffers, all buckets. */
  freeCount() {
    let n = 0;
    for (const list of this.free.values()) n += list.length;
    return n;
  }
}

/**
 * Uniform buffer cache, mode `simple` (the EP's default for uniforms): free lists keyed by exact
 * size (rounded to 16 B), LIFO, no limit.
 */
export class SimpleUniformCache {
  constructor(device, { ids }) {
    this.device = device;
    this.ids = ids;
    this.free = new Map();
    this.pending = [];
    this.all = new Set();
    this.stats = { created: 0, reused: 0 };
  }

  acquire(requestBytes) {
    const size = Math.ceil(requestBytes / 16) * 16;
    const list = this.free.get(size);
    if (list && list.length) {
      this.stats.reused += 1;
      return list.pop();
    }
    const buffer = this.device.createBuffer({ size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label: 'uniform' });
    this.ids.assign(buffer);
    this.all.add(buffer);
    this.stats.created += 1;
    return buffer;
  }

  release(buffer) {
    this.pending.push(buffer);
  }

  refresh() {
    for (const buffer of this.pending) {
      if (!this.free.has(buffer.size)) this.free.set(buffer.size, []);
      this.free.get(buffer.size).push(buffer);
    }
    this.pending.length = 0;
  }

  destroyAll() {
    for (const buffer of this.all) buffer.destroy();
    this.all.clear();
    this.free.clear();
    this.pending.length = 0;
  }
}

/** Creation ids for GPU buffers (a WeakMap, so ids never keep a buffer alive). */
export class BufferIds {
  constructor() {
    this.map = new WeakMap();
    this.next = 1;
  }

  assign(buffer) {
    const id = this.next++;
    this.map.set(buffer, id);
    return id;
  }

  get(buffer) {
    const id = this.map.get(buffer);
    if (id === undefined) throw new Error('buffer without an id');
    return id;
  }
}
