// qk_norm_rope_kv_append: per-head RMSNorm of q and k (Qwen3-style qk_norm), RoPE at one position
// and the KV-cache append, in one dispatch (replaces rms_norm.wgsl × 2, rotary_embedding.wgsl × 2
// and kv_append.wgsl × 2 of the unfused decode graph with qk_norm).
// Input is the fused QKV projection's output [q | k | v] (see rope_kv_append.wgsl).
//   for head x (q head h or k head g): inv = inverseSqrt(sum_d x[d]^2 / head_dim + eps)
//   xn[d] = x[d] * inv * norm_weight[d]   (q_norm for q heads, k_norm for k heads)
//   rotated as rotary_embedding.wgsl: out[i] = xn[i] * c - xn[i + half] * s; out[i + half] = xn[i + half] * c + xn[i] * s
//   q heads go to q_out, k heads to k_cache at pos; v heads are copied to v_cache at pos.
// No barriers: each invocation replays rms_norm.wgsl's 64-lane reduction of its head by itself
// (lane sums in order, then the tree 32, ..., 1) and uses the same expressions, so the results
// are bit-identical to the unfused ops on the same device.
// bindings:
//   0  qkv          storage read        array<f32>  (heads + 2 * kv_heads) * head_dim
//   1  q_norm       storage read        array<f32>  head_dim
//   2  k_norm       storage read        array<f32>  head_dim
//   3  cos_cache    storage read        array<f32>  max_tokens * head_dim / 2
//   4  sin_cache    storage read        array<f32>  max_tokens * head_dim / 2
//   5  q_out        storage read_write  array<f32>  heads * head_dim   (every element written)
//   6  k_cache      storage read_write  array<f32>  kv_heads * max_tokens * head_dim (position pos written)
//   7  v_cache      storage read_write  array<f32>  kv_heads * max_tokens * head_dim (position pos written)
//   8  u            uniform             {heads, kv_heads, head_dim, max_tokens, pos: u32, eps: f32}
// dispatch: ceil(max((heads + kv_heads) * head_dim / 2, kv_heads * head_dim) / 64) workgroups of 64;
// invocation idx < heads * half rotates q pair idx, the next kv_heads * half rotate k pairs, and
// idx < kv_heads * head_dim also copies v element idx.
struct Uniforms { heads: u32, kv_heads: u32, head_dim: u32, max_tokens: u32, pos: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> q_norm: array<f32>;
@group(0) @binding(2) var<storage, read> k_norm: array<f32>;
@group(0) @binding(3) var<storage, read> cos_cache: array<f32>;
@group(0) @binding(4) var<storage, read> sin_cache: array<f32>;
@group(0) @binding(5) var<storage, read_write> q_out: array<f32>;
@group(0) @binding(6) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(7) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(8) var<uniform> u: Uniforms;

// rms_norm.wgsl's reduction of qkv[base .. base + n) replayed by one invocation.
fn replayed_inv_rms(base: u32, n: u32, eps: f32) -> f32 {
  var partial: array<f32, 64>;
  for (var l = 0u; l < 64u; l++) {
    var s = 0.0;
    for (var i = l; i < n; i += 64u) {
      let v = qkv[base + i];
      s = s + v * v;
    }
    partial[l] = s;
  }
  for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
    for (var l = 0u; l < stride; l++) {
      partial[l] = partial[l] + partial[l + stride];
    }
  }
  return inverseSqrt(partial[0] / f32(n) + eps);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x;
  let half = u.head_dim / 2u;
  let q_len = u.heads * u.head_dim;
  let kv_len = u.kv_heads * u.head_dim;
  if (idx < u.heads * half) {
    let h = idx / half;
    let i = idx % half;
    let base = h * u.head_dim;
    let inv = replayed_inv_rms(base, u.head_dim, u.eps);
    let c = cos_cache[u.pos * half + i];
    let s = sin_cache[u.pos * half + i];
    let x1 = qkv[base + i] * inv * q_norm[i];
    let x2 = qkv[base + i + half] * inv * q_norm[i + half];
    q_out[base + i] = x1 * c - x2 * s;
    q_out[base + i + half] = x2 * c + x1 * s;
  } else if (idx < (u.heads + u.kv_heads) * half) {
    let j = idx - u.heads * half;
    let g = j / half;
    let i = j % half;
    let base = q_len + g * u.head_dim;
    let inv = replayed_inv_rms(base, u.head_dim, u.eps);
    let c = cos_cache[u.pos * half + i];
    let s = sin_cache[u.pos * half + i];
    let x1 = qkv[base + i] * inv * k_norm[i];
    let x2 = qkv[base + i + half] * inv * k_norm[i + half];
    let dst = (g * u.max_tokens + u.pos) * u.head_dim + i;
    k_cache[dst] = x1 * c - x2 * s;
    k_cache[dst + half] = x2 * c + x1 * s;
  }
  if (idx < kv_len) {
    let g = idx / u.head_dim;
    let d = idx % u.head_dim;
    v_cache[(g * u.max_tokens + u.pos) * u.head_dim + d] = qkv[q_len + kv_len + idx];
  }
}
