// Live-object probe: how many GPUBindGroup and GPUBuffer JS wrappers exist right now, and how
// many buffer bytes are live.
//
// Each wrapper returned by createBindGroup/createBuffer is registered with a
// FinalizationRegistry (ECMAScript §26.2); its callback runs after the engine's GC collected
// the wrapper. live = created − collected. In Safari a bind group's native memory is freed only
// when its wrapper is collected (shared/references.md, "Bind group lifetime in the engines"),
// so `bindGroupsLive` is the quantity that grows to ~150,000 in the onnxruntime field report.
//
// Buffer bytes (descriptor.size of each createBuffer): created, destroyed (GPUBuffer.destroy(),
// or its device's destroy() or loss), collected (the wrapper was collected before it was
// destroyed), and live = created − destroyed − collected; by count too: buffers destroyed and
// buffers not destroyed (created − destroyed − collected before destroy), so buffers whose
// memory was freed by destroy() are told from wrappers the GC has not collected yet. A buffer is counted once however many
// of those happen to it. Caveats: a creation that fails validation is counted as created (the
// probe cannot see validity without error scopes of its own); since 2024 WebKit no longer
// destroys a buffer when its wrapper is collected (references.md), so there "collected" means
// "may be freed".

import { onCreate } from './counters.js';

export const live = {
  bindGroupsCreated: 0, bindGroupsCollected: 0,
  buffersCreated: 0, buffersCollected: 0,
  bufferBytesCreated: 0, bufferBytesDestroyed: 0, bufferBytesCollected: 0,
  // buffers by count, as bytes: destroyed, and collected before being destroyed (a wrapper of a
  // destroyed buffer that is collected later frees nothing more: it is not counted again)
  buffersDestroyed: 0, buffersGoneCollected: 0,
};

// One record per buffer: {size, gone, device}; `gone` once destroyed or collected. Records of
// a device sit in a set (records, never buffers) so a device's destroy() or loss can mark them.
const recordOf = new WeakMap(); // GPUBuffer -> record
const recordsOf = new WeakMap(); // GPUDevice -> Set(record)

function gone(record, how) {
  if (record.gone) return;
  record.gone = how;
  if (how === 'collected') {
    live.bufferBytesCollected += record.size;
    live.buffersGoneCollected += 1;
  } else {
    live.bufferBytesDestroyed += record.size;
    live.buffersDestroyed += 1;
  }
  recordsOf.get(record.device)?.delete(record);
}

function deviceGone(device) {
  const records = recordsOf.get(device);
  if (!records) return;
  for (const r of [...records]) gone(r, 'destroyed');
}

const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => {
    if (held === 'bg') {
      live.bindGroupsCollected += 1;
      return;
    }
    live.buffersCollected += 1;
    gone(held, 'collected');
  })
  : null;

/** Start tracking wrappers. Returns false where FinalizationRegistry is missing. */
export function installLiveObjects() {
  onCreate('createBindGroup', (bg) => {
    live.bindGroupsCreated += 1;
    if (registry && bg) registry.register(bg, 'bg');
  });
  onCreate('createBuffer', (buf, args, device) => {
    live.buffersCreated += 1;
    const size = Number(args[0]?.size ?? 0) || 0;
    live.bufferBytesCreated += size;
    const record = { size, gone: null, device };
    if (buf && typeof buf === 'object') recordOf.set(buf, record);
    if (device && typeof device === 'object') {
      if (!recordsOf.has(device)) {
        recordsOf.set(device, new Set());
        // a lost device's buffers are gone with it (any reason: destroyed, unknown)
        Promise.resolve(device.lost).then(() => deviceGone(device), () => {});
      }
      recordsOf.get(device).add(record);
    }
    if (registry && buf) registry.register(buf, record);
  });
  onCreate('bufferDestroy', (_r, _args, buf) => {
    const record = buf && recordOf.get(buf);
    if (record) gone(record, 'destroyed');
  });
  onCreate('deviceDestroy', (_r, _args, device) => deviceGone(device));
  return registry !== null;
}

/** Current counts, with the derived live numbers. */
export function liveSnapshot() {
  return {
    bind_groups_created: live.bindGroupsCreated,
    bind_groups_collected: live.bindGroupsCollected,
    bind_groups_live: live.bindGroupsCreated - live.bindGroupsCollected,
    buffers_created: live.buffersCreated,
    buffers_collected: live.buffersCollected,
    buffers_live: live.buffersCreated - live.buffersCollected,
    buffer_bytes_created: live.bufferBytesCreated,
    buffer_bytes_destroyed: live.bufferBytesDestroyed,
    buffer_bytes_collected: live.bufferBytesCollected,
    buffer_bytes_live: live.bufferBytesCreated - live.bufferBytesDestroyed - live.bufferBytesCollected,
    buffers_destroyed: live.buffersDestroyed,
    buffers_not_destroyed: live.buffersCreated - live.buffersDestroyed - live.buffersGoneCollected,
  };
}
