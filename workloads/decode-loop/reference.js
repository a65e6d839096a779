// CPU reference of the decode graph: plain JavaScript, f32 arithmetic (Math.fround after every
// operation, Float32Array storage), written from the model's definition rather than from the
// graph, so it checks both the kernels and the way graph.js wires them.
//
// Reductions follow the kernels' order (sequential dot products; 64-lane strided partial sums
// then a tree for rms_norm and softmax), so the remaining differences are fused multiply-adds
// and the GPU's exp/inverseSqrt accuracy: a few ulps per op.

const f = Math.fround;
const LANES = 64;

function laneReduce(n, term, combine, init) {
  const partial = new Array(LANES).fill(init);
  for (let l = 0; l < LANES; l++) {
    let s = init;
    for (let i = l; i < n; i += LANES) s = combine(s, term(i));
    partial[l] = s;
  }
  for (let stride = LANES / 2; stride > 0; stride >>= 1) {
    for (let l = 0; l < stride; l++) partial[l] = combine(partial[l], partial[l + stride]);
  }
  return partial[0];
}

function rmsNorm(x, weight, rows, n, eps) {
  const y = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const base = r * n;
    const ss = laneReduce(n, (i) => f(x[base + i] * x[base + i]), (a, b) => f(a + b), 0);
    const inv = f(1 / Math.sqrt(f(f(ss / n) + f(eps))));
    for (let i = 0; i < n; i++) y[base + i] = f(f(x[base + i] * inv) * weight[i]);
  }
  return y;
}

function matmulNbits(x, b, scales, n, k) {
  const y = new Float32Array(n);
  const wordsPerRow = k / 8;
  const blocksPerRow = k / 32;
  for (let r = 0; r < n; r++) {
    let acc = 0;
    for (let blk = 0; blk < blocksPerRow; blk++) {
      const scale = scales[r * blocksPerRow + blk];
      for (let w = 0; w < 4; w++) {
        const word = b[r * wordsPerRow + blk * 4 + w];
        const k0 = blk * 32 + w * 8;
        for (let i = 0; i < 8; i++) {
          const q = (word >>> (4 * i)) & 0xf;
          acc = f(acc + f(x[k0 + i] * f((q - 8) * scale)));
        }
      }
    }
    y[r] = acc;
  }
  return y;
}

function matmulF32(x, w, n, k) {
  const y = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    let acc = 0;
    for (let i = 0; i < k; i++) acc = f(acc + f(w[r * k + i] * x[i]));
    y[r] = acc;
  }
  return y;
}

function rope(x, cos, sin, heads, headDim, pos) {
  const half = headDim / 2;
  const y = new Float32Array(heads * headDim);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      const c = cos[pos * half + i];
      const s = sin[pos * half + i];
      const a = h * headDim + i;
      y[a] = f(f(x[a] * c) - f(x[a + half] * s));
      y[a + half] = f(f(x[a + half] * c) + f(x[a] * s));
    }
  }
  return y;
}

export class ReferenceModel {
  /** @param {object} profile @param {Map<string, Float32Array|Uint32Array>} weights (weights.js) */
  constructor(profile, weights) {
    this.p = profile;
    this.w = weights;
    const cacheElems = profile.kv_heads * profile.max_tokens * profile.head_dim;
    this.kCache = Array.from({ length: profile.layers }, () => new Float32Array(cacheElems));
    this.vCache = Array.from({ length: profile.layers }, () => new Float32Array(cacheElems));
  }

  linear(name, x, n, k) {
    return matmulNbits(x, this.w.get(`${name}.b`), this.w.get(`${name}.scales`), n, k);
  }

  /** Logits (Float32Array of vocab) for input `token` at position `pos`; updates the KV cache. */
  step(token, pos) {
    const { layers, hidden, heads, kv_heads: kvHeads, head_dim: headDim, intermediate, vocab, max_tokens: maxTokens } = this.p;
    const eps = this.p.eps ?? 1e-6;
    const q = heads * headDim;
    const kv = kvHeads * headDim;
    const total = pos + 1;
    const group = heads / kvHeads;
    const scale = f(1 / Math.sqrt(headDim));
    const cos = this.w.get('rope.cos');
    const sin = this.w.get('rope.sin');

    let h = this.w.get('embed_tokens').slice(token * hidden, (token + 1) * hidden);
    for (let l = 0; l < layers; l++) {
      const p = `layers.${l}.`;
      const xn = rmsNorm(h, this.w.get(`${p}input_norm`), 1, hidden, eps);
      let qh = this.linear(`${p}q_proj`, xn, q, hidden);
      let kh = this.linear(`${p}k_proj`, xn, kv, hidden);
      const vh = this.linear(`${p}v_proj`, xn, kv, hidden);
      if (this.p.qk_norm) {
        qh = rmsNorm(qh, this.w.get(`${p}q_norm`), heads, headDim, eps);
        kh = rmsNorm(kh, this.w.get(`${p}k_norm`), kvHeads, headDim, eps);
      }
      const qr = rope(qh, cos, sin, heads, headDim, pos);
      const kr = rope(kh, cos, sin, kvHeads, headDim, pos);
      const kc = this.kCache[l];
      const vc = this.vCache[l];
      for (let g = 0; g < kvHeads; g++) {
        for (let d = 0; d < headDim; d++) {
          kc[(g * maxTokens + pos) * headDim + d] = kr[g * headDim + d];
          vc[(g * maxTokens + pos) * headDim + d] = vh[g * headDim + d];
        }
      }
      const attn = new Float32Array(q);
      for (let hd = 0; hd < heads; hd++) {
        const g = Math.floor(hd / group);
        const scores = new Float32Array(total);
        for (let t = 0; t < total; t++) {
          let acc = 0;
          for (let d = 0; d < headDim; d++) acc = f(acc + f(qr[hd * headDim + d] * kc[(g * maxTokens + t) * headDim + d]));
          scores[t] = f(acc * scale);
        }
        const m = laneReduce(total, (i) => scores[i], (a, b) => Math.max(a, b), -3.4028234663852886e38);
        const sum = laneReduce(total, (i) => f(Math.exp(f(scores[i] - m))), (a, b) => f(a + b), 0);
        const probs = scores.map((s) => f(f(Math.exp(f(s - m))) / sum));
        for (let d = 0; d < headDim; d++) {
          let acc = 0;
          for (let t = 0; t < total; t++) acc = f(acc + f(probs[t] * vc[(g * maxTokens + t) * headDim + d]));
          attn[hd * headDim + d] = acc;
        }
      }
      const o = this.linear(`${p}o_proj`, attn, hidden, q);
      const h1 = h.map((v, i) => f(v + o[i]));
      const xn2 = rmsNorm(h1, this.w.get(`${p}post_norm`), 1, hidden, eps);
      const gate = this.linear(`${p}gate_proj`, xn2, intermediate, hidden);
      const up = this.linear(`${p}up_proj`, xn2, intermediate, hidden);
      const act = gate.map((g, i) => f(f(g / f(1 + f(Math.exp(-g)))) * up[i]));
      const down = this.linear(`${p}down_proj`, act, hidden, intermediate);
      h = h1.map((v, i) => f(v + down[i]));
    }
    const hn = rmsNorm(h, this.w.get('final_norm'), 1, hidden, eps);
    return matmulF32(hn, this.w.get('lm_head'), vocab, hidden);
  }
}

/** Greedy pick (first maximum) and the margin to the runner-up. */
export function top2(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  let second = -Infinity;
  for (let i = 0; i < logits.length; i++) if (i !== best && logits[i] > second) second = logits[i];
  return { token: best, margin: logits[best] - second };
}
