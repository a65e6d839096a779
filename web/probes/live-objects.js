// Live-object probe: how many GPUBindGroup and GPUBuffer JS wrappers exist right now.
//
// Each wrapper returned by createBindGroup/createBuffer is registered with a
// FinalizationRegistry (ECMAScript §26.2); its callback runs after the engine's GC collected
// the wrapper. live = created − collected. In Safari a bind group's native memory is freed only
// when its wrapper is collected (shared/references.md, "Bind group lifetime in the engines"),
// so `bindGroupsLive` is the quantity that grows to ~150,000 in the onnxruntime field report.

import { onCreate } from './counters.js';

export const live = {
  bindGroupsCreated: 0, bindGroupsCollected: 0,
  buffersCreated: 0, buffersCollected: 0,
};

const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((kind) => {
    if (kind === 'bg') live.bindGroupsCollected += 1;
    else live.buffersCollected += 1;
  })
  : null;

/** Start tracking wrappers. Returns false where FinalizationRegistry is missing. */
export function installLiveObjects() {
  onCreate('createBindGroup', (bg) => {
    live.bindGroupsCreated += 1;
    if (registry && bg) registry.register(bg, 'bg');
  });
  onCreate('createBuffer', (buf) => {
    live.buffersCreated += 1;
    if (registry && buf) registry.register(buf, 'buf');
  });
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
  };
}
