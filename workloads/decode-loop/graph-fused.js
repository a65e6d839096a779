// The `fused` per-token decode graph: the same model and the same math as the unfused
// graph (graph-unfused.js), with fewer dispatches (the fusion experiment of the dispatch-overhead paper, arXiv
// 2604.02344: 876 → 564 dispatches per forward with unchanged shaders gave +53% tokens/s).
//
// Per layer, 8 dispatches instead of 19 (21 with qk_norm):
//   qkv_proj      rms_norm(input_norm) + q/k/v matmuls in one int4 matmul over the
//                 row-concatenated weights                         (rms_norm_matmul_nbits)
//   rope_kv       [q_norm, k_norm,] rope_q, rope_k, k_append, v_append   (rope_kv_append or
//                                                                   qk_norm_rope_kv_append)
//   attn_scores, attn_softmax, attn_v                               (unchanged)
//   o_proj        o_proj + attn_residual                            (matmul_nbits_add)
//   gate_up       rms_norm(post_norm) + gate_proj + up_proj + silu·mul  (rms_norm_matmul_nbits_silu_mul)
//   down_proj     down_proj + mlp_residual                          (matmul_nbits_add)
// plus embed, lm_head with final_norm fused in (rms_norm_matmul_f32), argmax: 3 per token.
// Every fused kernel keeps the unfused kernels' expressions and summation order (see each
// kernel's header), so tokens and logits are bit-identical to the unfused graph's on one device.
//
// Weights: the fused QKV matmul reads one tensor `layers.<l>.qkv_proj.{b,scales}` whose rows are
// q_proj's, then k_proj's, then v_proj's; the tensor spec names them in `concat` and main.js
// uploads the concatenation made by weights.js, weightData (row n of the result is byte-for-byte
// the source row).

import { graphBuilder, modelWeights, planLifetimes } from './graph-builder.js';

/** The fused graph of `profile` (see the header for its nodes). */
export function buildFusedDecodeGraph(profile) {
  const {
    layers, hidden, heads, kvHeads, headDim, intermediate, vocab, maxTokens, eps, q, kv, F32, tensors, tensor,
    nodes, node, act, kvState,
  } = graphBuilder(profile);
  const qkvParts = /^layers\.(\d+)\.(q|k|v)_proj$/;
  for (const spec of modelWeights(profile)) {
    if (spec.kind === 'int4') {
      if (qkvParts.test(spec.name)) continue; // uploaded as part of qkv_proj below
      tensor(`${spec.name}.b`, 'weight', spec.n * spec.k / 2);
      tensor(`${spec.name}.scales`, 'weight', (spec.n * spec.k / 32) * F32);
    } else {
      tensor(spec.name, 'weight', spec.elements * F32);
    }
  }
  const qkvRows = q + 2 * kv;
  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}.`;
    const parts = ['q_proj', 'k_proj', 'v_proj'].map((n) => `${p}${n}`);
    tensor(`${p}qkv_proj.b`, 'weight', qkvRows * hidden / 2, { concat: parts.map((n) => `${n}.b`) });
    tensor(`${p}qkv_proj.scales`, 'weight', (qkvRows * hidden / 32) * F32, { concat: parts.map((n) => `${n}.scales`) });
  }


  let h = act('embed.out', hidden);
  node('embed', 'gather', ['embed_tokens'], [h], { hidden, token: 'token' });

  for (let l = 0; l < layers; l++) {
    const p = `layers.${l}.`;
    const kCache = tensor(`${p}k_cache`, 'state', kvHeads * maxTokens * headDim * F32, kvState);
    const vCache = tensor(`${p}v_cache`, 'state', kvHeads * maxTokens * headDim * F32, kvState);

    const qkv = act(`${p}qkv_proj.out`, qkvRows);
    node(`${p}qkv_proj`, 'rms_norm_matmul_nbits', [h, `${p}input_norm`, `${p}qkv_proj.b`, `${p}qkv_proj.scales`], [qkv],
      { k: hidden, n: qkvRows, eps }, l);
    const qr = act(`${p}rope_q.out`, q);
    const ropeU = { heads, kv_heads: kvHeads, head_dim: headDim, max_tokens: 'kv_capacity', pos: 'pos' };
    if (profile.qk_norm) {
      node(`${p}qk_norm_rope_kv`, 'qk_norm_rope_kv_append', [qkv, `${p}q_norm`, `${p}k_norm`, 'rope.cos', 'rope.sin'],
        [qr, kCache, vCache], { ...ropeU, eps }, l);
    } else {
      node(`${p}rope_kv`, 'rope_kv_append', [qkv, 'rope.cos', 'rope.sin'], [qr, kCache, vCache], ropeU, l);
    }
    const attnU = { heads, kv_heads: kvHeads, head_dim: headDim, max_tokens: 'kv_capacity', total_len: 'total_len' };
    const scores = act(`${p}attn_scores.out`, heads * maxTokens);
    node(`${p}attn_scores`, 'attention_scores', [qr, kCache], [scores], { ...attnU, scale: 1 / Math.sqrt(headDim) }, l);
    const probs = act(`${p}attn_softmax.out`, heads * maxTokens);
    node(`${p}attn_softmax`, 'softmax', [scores], [probs], { rows: heads, n: 'total_len' }, l);
    const attn = act(`${p}attn_v.out`, q);
    node(`${p}attn_v`, 'attention_v', [probs, vCache], [attn], attnU, l);
    const h1 = act(`${p}o_proj.out`, hidden);
    node(`${p}o_proj`, 'matmul_nbits_add', [attn, `${p}o_proj.b`, `${p}o_proj.scales`, h], [h1], { k: q, n: hidden }, l);
    const m = act(`${p}gate_up.out`, intermediate);
    node(`${p}gate_up`, 'rms_norm_matmul_nbits_silu_mul',
      [h1, `${p}post_norm`, `${p}gate_proj.b`, `${p}gate_proj.scales`, `${p}up_proj.b`, `${p}up_proj.scales`], [m],
      { k: hidden, n: intermediate, eps }, l);
    const h2 = act(`${p}down_proj.out`, hidden);
    node(`${p}down_proj`, 'matmul_nbits_add', [m, `${p}down_proj.b`, `${p}down_proj.scales`, h1], [h2],
      { k: intermediate, n: hidden }, l);
    h = h2;
  }

  const logits = tensor('logits', 'output', vocab * F32);
  node('lm_head', 'rms_norm_matmul_f32', [h, 'final_norm', 'lm_head'], [logits], { k: hidden, n: vocab, eps });
  const next = tensor('argmax', 'output', 2 * 4);
  node('argmax', 'argmax', [logits], [next], { n: vocab });

  planLifetimes(tensors, nodes);
  return { name: 'fused', maxTokens, tensors, nodes, outputs: { logits, argmax: next } };
}
