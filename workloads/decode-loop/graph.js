// The per-token decode graph a cell runs: buildDecodeGraph(profile, {graph}) picks the unfused
// builder (graph-unfused.js, one kernel per op) or the fused one (graph-fused.js, fewer
// dispatches, bit-identical logits). Both build on graph-builder.js, which describes a graph's
// shape; no graph module imports this one, so there is no import cycle.

import { buildFusedDecodeGraph } from './graph-fused.js';
import { buildUnfusedDecodeGraph } from './graph-unfused.js';

export { graphCounts } from './graph-builder.js';

/** The graphs a cell can run (`--param graph=...`). */
export const GRAPHS = { unfused: buildUnfusedDecodeGraph, fused: buildFusedDecodeGraph };

/**
 * The decode graph of `profile` (a manifest profile: layers, hidden, ...). `graph`: 'unfused'
 * (layers × 19, or 21 with qk_norm, + 4 dispatches per token) or 'fused' (layers × 8 + 3).
 * Throws on an unknown graph name or a profile the kernels cannot run.
 */
export function buildDecodeGraph(profile, { graph = 'unfused' } = {}) {
  const build = GRAPHS[graph];
  if (!build) throw new Error(`unknown graph '${graph}' (have: ${Object.keys(GRAPHS).join(', ')})`);
  return build(profile);
}
