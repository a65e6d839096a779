// The unfused per-token decode graph (one kernel per op), built on graph-builder.js.
//
// buildUnfusedDecodeGraph(profile) dispatches, per layer, 19 kernels (21 with qk_norm):
//   input_norm, q_proj, k_proj, v_proj, [q_norm, k_norm], rope_q, rope_k, k_append, v_append,
//   attn_scores, attn_softmax, attn_v, o_proj, attn_residual, post_norm, gate_proj, up_proj,
//   mlp_act (silu·mul), down_proj, mlp_residual
// plus embed (gather), final_norm, lm_head, argmax = 4 per token. graph.js picks this builder or
// the fused one (graph-fused.js); graph-builder.js describes the graph's shape.

import { graphBuilder, modelWeights, planLifetimes } from './graph-builder.js';

/** The unfused graph of `profile` (see the header for its nodes). */
export function buildUnfusedDecodeGraph(profile) {
  const {
    layers, hidden, heads, kvHeads, headDim, intermediate, vocab, maxTokens, eps, q, kv, F32, tensors, tensor,
    nodes, node, act, kvState,
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
    const kCache = tensor(`${p}k_cache`, 'state', kvHeads * maxTokens * headDim * F32, kvState);
    const vCache = tensor(`${p}v_cache`, 'state', kvHeads * maxTokens * headDim * F32, kvState);

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
    const cacheU = { kv_heads: kvHeads, head_dim: headDim, max_tokens: 'kv_capacity', pos: 'pos' };
    node(`${p}k_append`, 'kv_append', [kr], [kCache], cacheU, l);
    node(`${p}v_append`, 'kv_append', [vh], [vCache], cacheU, l);
    // Scores/probs are [heads, total_len]; their buffers are sized for max_tokens so the storage
    // buffer cache hands out the same bucket every token (as the max-length present KV buffers).
    const attnU = { heads, kv_heads: kvHeads, head_dim: headDim, max_tokens: 'kv_capacity', total_len: 'total_len' };
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
  return { name: 'unfused', maxTokens, tensors, nodes, outputs: { logits, argmax: next } };
}
