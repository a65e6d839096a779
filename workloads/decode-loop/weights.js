// Seeded synthetic weights: the same bytes for the GPU upload and the CPU reference.
//
// Each tensor draws from its own stream, seeded from (params.seed, tensor name), so a tensor's
// values do not depend on which other tensors exist. int4 linears are packed as ORT's
// MatMulNBits B input (4 bits, block 32, no zero points: zero point 8), read as u32 little-endian:
// row n holds K/8 words, element k of the row in bits 4*(k % 8) of word k / 8; one f32 scale per
// row and block (workloads/kernels/matmul_nbits.wgsl).
import { prng } from '../lib/prng.js';

import { modelWeights } from './graph-builder.js';

/** 32-bit FNV-1a of a string (also the seed mixer). */
function hashString(s, h = 0x811c9dc5) {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}


const unit = (next) => next() / 4294967296; // [0, 1)

function uniformF32(next, elements, gain) {
  const out = new Float32Array(elements);
  for (let i = 0; i < elements; i++) out[i] = (unit(next) * 2 - 1) * gain;
  return out;
}

function normWeight(next, elements) {
  const out = new Float32Array(elements);
  for (let i = 0; i < elements; i++) out[i] = 1 + (unit(next) * 2 - 1) * 0.1;
  return out;
}

function int4Linear(next, n, k) {
  // q uniform in 0..15, so (q - 8) has standard deviation ~4.6; scales near 1 / (4.6 sqrt(K))
  // keep each output's variance near its input's.
  const b = new Uint32Array((n * k) / 8);
  for (let i = 0; i < b.length; i++) b[i] = next();
  const scales = new Float32Array((n * k) / 32);
  const base = 1 / (4.6 * Math.sqrt(k));
  for (let i = 0; i < scales.length; i++) scales[i] = base * (0.5 + unit(next));
  return { b, scales };
}

function ropeTable(profile, fn) {
  const half = profile.head_dim / 2;
  const theta = profile.rope_theta ?? 10000;
  const out = new Float32Array(profile.max_tokens * half);
  for (let pos = 0; pos < profile.max_tokens; pos++) {
    for (let i = 0; i < half; i++) {
      out[pos * half + i] = fn(pos * theta ** (-(2 * i) / profile.head_dim));
    }
  }
  return out;
}

/**
 * Generate every weight of `profile`: Map(tensor name -> Float32Array | Uint32Array), with the
 * names the graph binds (`<linear>.b`, `<linear>.scales`, f32 tensors by name).
 */
export function generateWeights(profile, seed) {
  const out = new Map();
  for (const spec of modelWeights(profile)) {
    const next = prng(hashString(spec.name, hashString(String(seed))));
    if (spec.kind === 'int4') {
      const { b, scales } = int4Linear(next, spec.n, spec.k);
      out.set(`${spec.name}.b`, b);
      out.set(`${spec.name}.scales`, scales);
    } else if (spec.init === 'uniform') {
      out.set(spec.name, uniformF32(next, spec.elements, spec.gain));
    } else if (spec.init === 'norm') {
      out.set(spec.name, normWeight(next, spec.elements));
    } else if (spec.init === 'rope_cos') {
      out.set(spec.name, ropeTable(profile, Math.cos));
    } else if (spec.init === 'rope_sin') {
      out.set(spec.name, ropeTable(profile, Math.sin));
    } else {
      throw new Error(`unknown init ${spec.init} for ${spec.name}`);
    }
  }
  return out;
}

/**
 * The bytes to upload for a weight tensor of either graph: the named weight, or for a `concat`
 * spec the named weights end to end (same typed-array type). Throws if a part is missing.
 */
export function weightData(spec, weights) {
  if (!spec.concat) return weights.get(spec.name);
  const parts = spec.concat.map((n) => {
    const w = weights.get(n);
    if (!w) throw new Error(`weight ${spec.name}: part ${n} missing`);
    return w;
  });
  const out = new parts[0].constructor(parts.reduce((a, w) => a + w.length, 0));
  let at = 0;
  for (const w of parts) {
    out.set(w, at);
    at += w.length;
  }
  return out;
}
