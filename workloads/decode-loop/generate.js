// Generate calls: the unit a cell repeats to ask "does memory come back between calls?"
//
// A generate call (an application's generate() on one prompt, or one 30 s audio chunk of a
// speech model) owns everything that is not the model: a storage buffer cache for activations
// and the KV caches, a uniform buffer cache, the `reuse` bind group cache, the executor's own
// buffers (staging, per-node uniforms) and, for a chunk loop, N MiB of encoder output buffers
// written once at the call's start. Weights and pipelines belong to the session and outlive
// every call. A call's tokens are consecutive steps; its buffers are created inside its first
// step, so that step's counters hold them.
//
// When the next call starts (inside its first step) the previous one ends (manifest.json,
// `call_ending`):
//   clean             destroy() every buffer of the call: live buffer bytes return to the
//                     session's baseline at each call
//   leak              keep every reference, destroy nothing (an application that keeps each
//                     past generation's state): live buffer bytes grow by exactly the call's
//                     createBuffer bytes per call, and nothing can collect them
//   drop-undestroyed  drop every reference without destroy(): the memory goes only when the
//                     garbage collector collects the wrappers (WebKit since 2024 does not free a
//                     buffer when its wrapper is collected: references.md)
// The last call ends the same way after the last step, before the device is destroyed.

import { BindGroupReuseCache } from './bind-group-reuse.js';
import { BucketBufferCache, SimpleUniformCache } from './buffer-cache.js';
import { DecodeExecutor } from './executor.js';

const MiB = 1 << 20;

export class GenerateCall {
  /**
   * @param {object} session {device, graph, pipelines, ids, persistent (weights), padBuffers}
   * @param {object} o the options (options.js)
   * @param {number} index 0-based call number
   */
  constructor(session, o, index) {
    const { device, ids } = session;
    this.index = index;
    this.bindGroups = o.variant === 'reuse' ? new BindGroupReuseCache(device, ids, o.bindGroupCache !== 'never') : null;
    this.storage = new BucketBufferCache(device, { pop: o.bufferCachePop, ids, onDestroy: (b) => this.bindGroups?.dropBuffer(b) });
    this.uniformCache = new SimpleUniformCache(device, { ids });
    this.encoderBuffers = encoderOutputs(device, o.encoderMibPerCall, o.encoderBufferMib);
    this.executor = new DecodeExecutor({
      device, graph: session.graph, pipelines: session.pipelines, variant: o.variant, storage: this.storage,
      uniformCache: this.uniformCache, bindGroups: this.bindGroups, ids, persistent: session.persistent,
      maxPendingDispatches: o.maxPendingDispatches, dispatchesPerPass: o.dispatchesPerPass, maxInFlight: o.maxInFlight,
      uniformBuffers: o.uniformBuffers, padBuffers: session.padBuffers, storageBufferMinBytes: o.storageBufferMinBytes,
      kvBuffers: o.kvBuffers, keepGoing: o.onGpuError === 'continue',
    });
  }

  /** Bytes of the encoder output buffers (chunk loop). */
  get encoderBytes() {
    return this.encoderBuffers.reduce((a, b) => a + b.size, 0);
  }

  /**
   * End the call: 'clean' destroys its buffers; 'leak' pushes the call onto `leaked` (kept
   * referenced); 'drop-undestroyed' does nothing (the caller drops its reference).
   */
  end(ending, leaked) {
    if (ending === 'clean') {
      this.executor.destroy();
      this.storage.destroyAll();
      this.uniformCache.destroyAll();
      for (const b of this.encoderBuffers) b.destroy();
      this.encoderBuffers = [];
    } else if (ending === 'leak') {
      leaked.push(this);
    } else if (ending !== 'drop-undestroyed') {
      throw new Error(`unknown call ending '${ending}' (have: clean, leak, drop-undestroyed)`);
    }
  }
}

/**
 * A chunk's encoder output: `mib` MiB in buffers of at most `bufferMib` MiB (STORAGE | COPY_DST),
 * each cleared once by one submitted command buffer so that the engine really backs it.
 */
function encoderOutputs(device, mib, bufferMib) {
  const total = Math.round(mib * MiB);
  if (total <= 0) return [];
  const per = Math.max(4, Math.round(bufferMib * MiB / 4) * 4);
  const buffers = [];
  for (let at = 0, i = 0; at < total; at += per, i++) {
    const size = Math.ceil(Math.min(per, total - at) / 4) * 4;
    buffers.push(device.createBuffer({ label: `encoder_output.${i}`, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }));
  }
  const enc = device.createCommandEncoder();
  for (const b of buffers) enc.clearBuffer(b);
  device.queue.submit([enc.finish()]);
  return buffers;
}
