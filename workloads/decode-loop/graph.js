// The per-token decode graph: a list of nodes {name, op, inputs, outputs, uniforms, layer}.
//
// buildDecodeGraph(profile, {graph: 'unfused'}) returns
//   {tensors: Map(name -> {name, kind, bytes, ...}), nodes: [...], outputs: {logits, argmax}}
// Tensor kinds: 'weight' (written once at setup), 'state' (the KV caches, live for the whole run),
// 'activation' (taken from the storage buffer cache by its producer, released after its last
// consumer), 'output' (logits and argmax: released after the token's readback).
// A node's uniform value is a number or the name of a per-token input: 'token' (the input id),
// 'pos' (its position, 0-based), 'total_len' (pos + 1).
//
// The unfused graph dispatches one kernel per op, per layer (19, or 21 with qk_norm):
//   input_norm, q_proj, k_proj, v_proj, [q_norm, k_norm], rope_q, rope_k, k_append, v_append,
//   attn_scores, attn_softmax, attn_v, o_proj, attn_residual, post_norm, gate_proj, up_proj,
//   mlp_act (silu·mul), down_proj, mlp_residual
// plus embed (gather), final_norm, lm_head, argmax = 4 per token. The `fused` graph
// (buildDecodeGraph(profile, {graph: 'fused'}), built in graph-fused.js: norm into the next
// matmul, QKV into one matmul, gate/up with silu·mul, residual into the matmul before it, as ORT's
// matmul_nbits_qkv_sln / matmul_nbits_silu_mul programs do) has layers × 8 + 3 per token.

import { buildFusedDecodeGraph } from './graph-fused.js';

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
 * What every graph builder (unfused here, fused in graph-fused.js) starts from: the checked
 * profile's dimensions (q/kv: q and k/v widths in floats; F32: bytes per f32), a tensor registry
 * (`tensor(name, kind, bytes, extra)` → name; a name defined twice throws), the node list
 * (`node(name, op, inputs, outputs, uniforms, layer)`) and `act(name, elements)` for an f32
 * activation.
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
  };
}

export function buildDecodeGraph(profile, { graph = 'unfused' } = {}) {
  if (graph === 'fused') return buildFusedDecodeGraph(profile);
  if (graph !== 'unfused') throw new Error(`unknown graph '${graph}' (have: unfused, fused)`);
  const {
    layers, hidden, heads, kvHeads, headDim, intermediate, vocab, maxTokens, eps, q, kv, F32, tensors, tensor,
    nodes, node, act,
  } = graphBuilder(profile);
  for (const spec of modelWeights(profile)) {
    const bytes = spec.kind === 'int4' ? spec.n * spec.k / 2 : spec.elements * F32;
    if (spec.kind === 'int4') {
      tensor(`${spec.name}.b`, 'weight', bytes);
      tensor(`${spec.name}.scales`, 'weight', (spec.n * spec.k / 32) * F32);
    } else {
      tensor(spec.name, 'weight', bytes);
    }
  }
  const linear = (l, name, x, n, k) => {
    const w = `layers.${l}.${name}`;
    const y = act(`${w}.out`, n);
    node(`${w}`, 'matmul_nbits', [x, `${w}.b`, `${w}.scales`], [y], { k, n }, l);
    return y;
  };

  let h = act('embed.out', hidden);
  node('embed', 'gather', ['embed_tokens'], [h], { hidden, token: 'token' });

  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}.`;
    const kCache = tensor(`${p}k_cache`, 'state', kvHeads * maxTokens * headDim * F32);
    const vCache = tensor(`${p}v_cache`, 'state', kvHeads * maxTokens * headDim * F32);

    const xn = act(`${p}input_norm.out`, hidden);
    node(`${p}input_norm`, 'rms_norm', [h, `${p}input_norm`], [xn], { n: hidden, rows: 1, eps }, l);
    let qh = linear(l, 'q_proj', xn, q, hidden);
    let kh = linear(l, 'k_proj', xn, kv, hidden);
    const vh = linear(l, 'v_proj', xn, kv, hidden);
    if (profile.qk_norm) {
      const qn = act(`${p}q_norm.out`, q);
      node(`${p}q_norm`, 'rms_norm', [qh, `${p}q_norm`], [qn], { n: headDim, rows: heads, eps }, l);
      const kn = act(`${p}k_norm.out`, kv);
      node(`${p}k_norm`, 'rms_norm', [kh, `${p}k_norm`], [kn], { n: headDim, rows: kvHeads, eps }, l);
      qh = qn;
      kh = kn;
    }
    const qr = act(`${p}rope_q.out`, q);
    node(`${p}rope_q`, 'rotary_embedding', [qh, 'rope.cos', 'rope.sin'], [qr], { heads, head_dim: headDim, pos: 'pos' }, l);
    const kr = act(`${p}rope_k.out`, kv);
    node(`${p}rope_k`, 'rotary_embedding', [kh, 'rope.cos', 'rope.sin'], [kr], { heads: kvHeads, head_dim: headDim, pos: 'pos' }, l);
    const cacheU = { kv_heads: kvHeads, head_dim: headDim, max_tokens: maxTokens, pos: 'pos' };
    node(`${p}k_append`, 'kv_append', [kr], [kCache], cacheU, l);
    node(`${p}v_append`, 'kv_append', [vh], [vCache], cacheU, l);
    // Scores/probs are [heads, total_len]; their buffers are sized for max_tokens so the storage
    // buffer cache hands out the same bucket every token (as the max-length present KV buffers).
    const attnU = { heads, kv_heads: kvHeads, head_dim: headDim, max_tokens: maxTokens, total_len: 'total_len' };
    const scores = act(`${p}attn_scores.out`, heads * maxTokens);
    node(`${p}attn_scores`, 'attention_scores', [qr, kCache], [scores], { ...attnU, scale: 1 / Math.sqrt(headDim) }, l);
    const probs = act(`${p}attn_softmax.out`, heads * maxTokens);
    node(`${p}attn_softmax`, 'softmax', [scores], [probs], { rows: heads, n: 'total_len' }, l);
    const attn = act(`${p}attn_v.out`, q);
    node(`${p}attn_v`, 'attention_v', [probs, vCache], [attn], attnU, l);
    const o = linear(l, 'o_proj', attn, hidden, q);
    const h1 = act(`${p}attn_residual.out`, hidden);
    node(`${p}attn_residual`, 'add', [h, o], [h1], { n: hidden }, l);

    const xn2 = act(`${p}post_norm.out`, hidden);
    node(`${p}post_norm`, 'rms_norm', [h1, `${p}post_norm`], [xn2], { n: hidden, rows: 1, eps }, l);
    const g = linear(l, 'gate_proj', xn2, intermediate, hidden);
    const u = linear(l, 'up_proj', xn2, intermediate, hidden);
    const m = act(`${p}mlp_act.out`, intermediate);
    node(`${p}mlp_act`, 'silu_mul', [g, u], [m], { n: intermediate }, l);
    const d = linear(l, 'down_proj', m, hidden, intermediate);
    const h2 = act(`${p}mlp_residual.out`, hidden);
    node(`${p}mlp_residual`, 'add', [h1, d], [h2], { n: hidden }, l);
    h = h2;
  }

  const hn = act('final_norm.out', hidden);
  node('final_norm', 'rms_norm', [h, 'final_norm'], [hn], { n: hidden, rows: 1, eps });
  const logits = tensor('logits', 'output', vocab * F32);
  node('lm_head', 'matmul_f32', [hn, 'lm_head'], [logits], { k: hidden, n: vocab });
  const next = tensor('argmax', 'output', 2 * 4);
  node('argmax', 'argmax', [logits], [next], { n: vocab });

  planLifetimes(tensors, nodes);
  return { name: graph, tensors, nodes, outputs: { logits, argmax: next } };
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
