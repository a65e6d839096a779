// What every per-token decode graph builder starts from (graph-unfused.js, graph-fused.js):
// the model's weight specs, the profile check, the tensor registry and node list, the
// activation lifetimes, and dispatch counts. Imports nothing, so the graph modules form no
// import cycle (graph.js picks a builder; each builder imports this file).
//
// A graph is {name, maxTokens (the profile's KV capacity), tensors: Map(name -> {name, kind,
// bytes, ...}), nodes: [...], outputs: {logits, argmax}}; a node is {name, op, inputs, outputs,
// uniforms, layer, releases}.
// Tensor kinds: 'weight' (written once at setup), 'state' (the KV caches, live for a generate
// call), 'activation' (taken from the storage buffer cache by its producer, released after its
// last consumer), 'output' (logits and argmax: released after the token's readback).
// A node's uniform value is a number or the name of a per-token input: 'token' (the input id),
// 'pos' (its position, 0-based), 'total_len' (pos + 1), 'kv_capacity' (positions the KV cache
// buffers hold: max_tokens when preallocated, pos + 1 when re-created every token).

/** Weight specs for a profile: int4 linears (MatMulNBits) and f32 tensors. */
export function modelWeights(profile) {
  const { layers, hidden, heads, kv_heads: kvHeads, head_dim: headDim, intermediate, vocab } = profile;
  const q = heads * headDim;
  const kv = kvHeads * headDim;
  const specs = [{ name: 'embed_tokens', kind: 'f32', elements: vocab * hidden, init: 'uniform', gain: 1 }];
  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}.`;
    specs.push({ name: `${p}input_norm`, kind: 'f32', elements: hidden, init: 'norm' });
    specs.push({ name: `${p}q_proj`, kind: 'int4', n: q, k: hidden });
    specs.push({ name: `${p}k_proj`, kind: 'int4', n: kv, k: hidden });
    specs.push({ name: `${p}v_proj`, kind: 'int4', n: kv, k: hidden });
    if (profile.qk_norm) {
      specs.push({ name: `${p}q_norm`, kind: 'f32', elements: headDim, init: 'norm' });
      specs.push({ name: `${p}k_norm`, kind: 'f32', elements: headDim, init: 'norm' });
    }
    specs.push({ name: `${p}o_proj`, kind: 'int4', n: hidden, k: q });
    specs.push({ name: `${p}post_norm`, kind: 'f32', elements: hidden, init: 'norm' });
    specs.push({ name: `${p}gate_proj`, kind: 'int4', n: intermediate, k: hidden });
    specs.push({ name: `${p}up_proj`, kind: 'int4', n: intermediate, k: hidden });
    specs.push({ name: `${p}down_proj`, kind: 'int4', n: hidden, k: intermediate });
  }
  specs.push({ name: 'final_norm', kind: 'f32', elements: hidden, init: 'norm' });
  specs.push({ name: 'lm_head', kind: 'f32', elements: vocab * hidden, init: 'uniform', gain: 4 / Math.sqrt(hidden) });
  specs.push({ name: 'rope.cos', kind: 'f32', elements: profile.max_tokens * (headDim / 2), init: 'rope_cos' });
  specs.push({ name: 'rope.sin', kind: 'f32', elements: profile.max_tokens * (headDim / 2), init: 'rope_sin' });
  return specs;
}

/** Check the profile's numbers fit the kernels' shape contracts. */
export function checkProfile(profile) {
  const need = ['layers', 'hidden', 'heads', 'kv_heads', 'head_dim', 'intermediate', 'vocab', 'max_tokens'];
  for (const k of need) {
    if (!Number.isInteger(profile[k]) || profile[k] <= 0) throw new Error(`profile.${k} must be a positive integer (got ${profile[k]})`);
  }
  const { hidden, heads, kv_heads: kvHeads, head_dim: headDim, intermediate } = profile;
  if (hidden % 32 || (heads * headDim) % 32 || intermediate % 32) {
    throw new Error('hidden, heads*head_dim and intermediate must be multiples of 32 (int4 block size)');
  }
  if (heads % kvHeads) throw new Error('heads must be a multiple of kv_heads');
  if (headDim % 2) throw new Error('head_dim must be even (rotary embedding)');
}

/**
 * What every graph builder (graph-unfused.js, graph-fused.js) starts from: the checked
 * profile's dimensions (q/kv: q and k/v widths in floats; F32: bytes per f32), a tensor registry
 * (`tensor(name, kind, bytes, extra)` → name; a name defined twice throws), the node list
 * (`node(name, op, inputs, outputs, uniforms, layer)`), `act(name, elements)` for an f32
 * activation and `kvState`, the extra fields of a KV cache tensor.
 */
export function graphBuilder(profile) {
  checkProfile(profile);
  const { layers, hidden, heads, kv_heads: kvHeads, head_dim: headDim, intermediate, vocab } = profile;
  const F32 = 4;
  const tensors = new Map();
  const tensor = (name, kind, bytes, extra = {}) => {
    if (tensors.has(name)) throw new Error(`tensor ${name} defined twice`);
    tensors.set(name, { name, kind, bytes, ...extra });
    return name;
  };
  const nodes = [];
  const node = (name, op, inputs, outputs, uniforms, layer = null) => {
    nodes.push({ name, op, inputs, outputs, uniforms, layer });
  };
  return {
    layers, hidden, heads, kvHeads, headDim, intermediate, vocab,
    maxTokens: profile.max_tokens, eps: profile.eps ?? 1e-6, q: heads * headDim, kv: kvHeads * headDim, F32,
    tensors, tensor, nodes, node, act: (name, elements) => tensor(name, 'activation', elements * F32),
    // extra fields of a KV cache tensor: its layout [kv_heads, capacity, head_dim] of f32, so the
    // executor can re-create it with another capacity (kv_buffers=recreate-*)
    kvState: { kv: { heads: kvHeads, headDim, bytesPerPosition: kvHeads * headDim * F32 } },
  };
}

/**
 * For each node, the activations whose last consumer it is (`node.releases`), as ORT's
 * execution frame frees an intermediate value after its last use.
 */
export function planLifetimes(tensors, nodes) {
  const last = new Map();
  nodes.forEach((n, i) => n.inputs.forEach((t) => last.set(t, i)));
  nodes.forEach((n) => { n.releases = []; });
  for (const [name, i] of last) {
    if (tensors.get(name)?.kind === 'activation') nodes[i].releases.push(name);
  }
  for (const [name, t] of tensors) {
    if (t.kind === 'activation' && !last.has(name)) throw new Error(`activation ${name} is never read`);
  }
}

/** Dispatches per layer and per token of a built graph. */
export function graphCounts(graph) {
  const perLayer = graph.nodes.filter((n) => n.layer === 0).length;
  return { dispatches_per_token: graph.nodes.length, dispatches_per_layer: perLayer, outside_layers: graph.nodes.filter((n) => n.layer === null).length };
}
