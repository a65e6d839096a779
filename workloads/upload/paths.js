// The three ways to get bytes from JS into a GPUBuffer (WebGPU spec §19.3 GPUQueue.writeBuffer;
// §5.2 buffer mapping: mappedAtCreation, mapAsync(GPUMapMode.WRITE)), one class per path.
//
//   write-buffer        queue.writeBuffer(dst, 0, src): the browser copies src into its own
//                       staging memory (Dawn: a ring in the GPU process's shared memory).
//   staging-ring        `ring` MAP_WRITE | COPY_SRC staging buffers made once (mapped at
//                       creation); each upload takes the next one, waits for its re-map if the
//                       GPU has not released it yet, writes its mapped range, unmaps, copies it
//                       into dst and starts its mapAsync(WRITE) again (not awaited).
//   mapped-at-creation  a new COPY_SRC staging buffer per upload, createBuffer({mappedAtCreation:
//                       true}); written, unmapped, copied into dst, destroyed after the submit.
//   map-async-write     a new MAP_WRITE | COPY_SRC staging buffer per upload, mapAsync(WRITE)
//                       awaited, written, unmapped, copied into dst, destroyed after the submit.
//
// `ledger` counts the staging buffers and bytes each path created and destroyed, so a step can
// report what it allocated without depending on the probes.

export const PATHS = ['write-buffer', 'staging-ring', 'mapped-at-creation', 'map-async-write'];

/** Per-upload WebGPU calls of each path (before the workload's own sync/verify calls). */
export const CALLS_PER_UPLOAD = {
  'write-buffer': { createBuffer: 0, bufferDestroy: 0, mapAsync: 0, writeBuffer: 1, submit: 0 },
  'staging-ring': { createBuffer: 0, bufferDestroy: 0, mapAsync: 1, writeBuffer: 0, submit: 1 },
  'mapped-at-creation': { createBuffer: 1, bufferDestroy: 1, mapAsync: 0, writeBuffer: 0, submit: 1 },
  'map-async-write': { createBuffer: 1, bufferDestroy: 1, mapAsync: 1, writeBuffer: 0, submit: 1 },
};

const usage = () => globalThis.GPUBufferUsage;

class Ledger {
  constructor() {
    this.buffersCreated = 0;
    this.buffersDestroyed = 0;
    this.bytesCreated = 0;
    this.bytesDestroyed = 0;
  }

  created(size) {
    this.buffersCreated += 1;
    this.bytesCreated += size;
  }

  destroyed(size) {
    this.buffersDestroyed += 1;
    this.bytesDestroyed += size;
  }

  snapshot() {
    return { ...this };
  }
}

/**
 * An upload path on `device`. `maxBytes`: the largest upload (the ring's slot size); `ring`:
 * the staging-ring's capacity. `upload(dst, src)` resolves once src (a Uint8Array, byteLength a
 * multiple of 4) is queued for dst, with {waitMs}: time spent waiting for a staging buffer's map
 * (ring re-map, or the per-upload mapAsync), ms.
 */
export class Uploader {
  constructor(device, path, { maxBytes, ring = 4 } = {}) {
    if (!PATHS.includes(path)) throw new Error(`upload: unknown path ${path} (valid: ${PATHS.join(', ')})`);
    this.device = device;
    this.path = path;
    this.maxBytes = maxBytes;
    this.ringSize = ring;
    this.ledger = new Ledger();
    this.slots = [];
    this.next = 0;
  }

  /** Creates the ring (staging-ring only): `ring` buffers of maxBytes, mapped at creation. */
  init() {
    if (this.path !== 'staging-ring') return;
    const U = usage();
    for (let i = 0; i < this.ringSize; i++) {
      const buffer = this.device.createBuffer({
        label: `upload.ring.${i}`, size: this.maxBytes, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true,
      });
      this.ledger.created(this.maxBytes);
      this.slots.push({ buffer, ready: null, mapped: true });
    }
  }

  copy(staging, dst, size) {
    const enc = this.device.createCommandEncoder({ label: 'upload.copy' });
    enc.copyBufferToBuffer(staging, 0, dst, 0, size);
    this.device.queue.submit([enc.finish()]);
  }

  async upload(dst, src) {
    const size = src.byteLength;
    const U = usage();
    const d = this.device;
    let waitMs = 0;
    if (this.path === 'write-buffer') {
      d.queue.writeBuffer(dst, 0, src);
    } else if (this.path === 'staging-ring') {
      if (size > this.maxBytes) throw new Error(`upload: ${size} bytes exceed the ring's slot size ${this.maxBytes}`);
      const slot = this.slots[this.next];
      this.next = (this.next + 1) % this.slots.length;
      if (!slot.mapped) {
        const t = performance.now();
        await slot.ready;
        waitMs = performance.now() - t;
      }
      new Uint8Array(slot.buffer.getMappedRange(0, size)).set(src);
      slot.buffer.unmap();
      slot.mapped = false;
      this.copy(slot.buffer, dst, size);
      slot.ready = slot.buffer.mapAsync(GPUMapMode.WRITE).then(() => { slot.mapped = true; });
    } else {
      const atCreation = this.path === 'mapped-at-creation';
      const staging = d.createBuffer({
        label: `upload.${this.path}`, size,
        usage: atCreation ? U.COPY_SRC : U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: atCreation,
      });
      this.ledger.created(size);
      if (!atCreation) {
        const t = performance.now();
        await staging.mapAsync(GPUMapMode.WRITE);
        waitMs = performance.now() - t;
      }
      new Uint8Array(staging.getMappedRange()).set(src);
      staging.unmap();
      this.copy(staging, dst, size);
      // destroy() after submit: the queued copy still runs (WebGPU spec §5.1.5 destroy: the
      // buffer's memory is freed once the submitted work that uses it has completed)
      staging.destroy();
      this.ledger.destroyed(size);
    }
    return { waitMs };
  }

  /** Waits for ring slots still being re-mapped, then destroys them. */
  async destroy() {
    for (const slot of this.slots) {
      try {
        await slot.ready;
      } catch {
        // a device lost or destroyed meanwhile: the buffer goes with it
      }
      slot.buffer.destroy();
      this.ledger.destroyed(this.maxBytes);
    }
    this.slots = [];
  }
}

/**
 * Upload sizes from the `sizes` parameter: comma-separated byte counts, each a multiple of 4
 * from 16 to `max` (the device's maxBufferSize). Throws Error with a one-line message.
 */
export function parseSizes(text, max = 2 ** 30) {
  const items = String(text ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (!items.length) throw new Error('upload: --param sizes is empty (give bytes, e.g. 65536,1048576)');
  return items.map((item) => {
    const v = /^\d+$/.test(item) ? Number(item) : NaN;
    if (!Number.isSafeInteger(v) || v < 16 || v > max || v % 4 !== 0) {
      throw new Error(`upload: --param sizes item ${item}: must be a multiple of 4 bytes from 16 to ${max}`);
    }
    return v;
  });
}
