// rope_kv_append: RoPE of q and k at one position and the KV-cache append, in one dispatch
// (replaces rotary_embedding.wgsl × 2 and kv_append.wgsl × 2 of the unfused decode graph).
// Input is the fused QKV projection's output [q | k | v]: q = heads * head_dim floats from 0,
// k = kv_heads * head_dim from Q, v = kv_heads * head_dim from Q + KV.
//   half = head_dim / 2, c = cos_cache[pos * half + i], s = sin_cache[pos * half + i]
//   q_out[h, i]        = q[h, i] * c - q[h, i + half] * s;   q_out[h, i + half] = q[h, i + half] * c + q[h, i] * s
//   k_cache[(g * max_tokens + pos) * head_dim + i (+ half)] = the same rotation of k[g]
//   v_cache[(g * max_tokens + pos) * head_dim + d]          = v[g, d]
// The expressions are rotary_embedding.wgsl's, so the results are bit-identical to the unfused ops.
// bindings:
//   0  qkv        storage read        array<f32>  (heads + 2 * kv_heads) * head_dim
//   1  cos_cache  storage read        array<f32>  max_tokens * head_dim / 2
//   2  sin_cache  storage read        array<f32>  max_tokens * head_dim / 2
//   3  q_out      storage read_write  array<f32>  heads * head_dim   (every element written)
//   4  k_cache    storage read_write  array<f32>  kv_heads * max_tokens * head_dim (position pos written)
//   5  v_cache    storage read_write  array<f32>  kv_heads * max_tokens * head_dim (position pos written)
//   6  u          uniform             {heads, kv_heads, head_dim, max_tokens, pos: u32}
// dispatch: ceil(max((heads + kv_heads) * head_dim / 2, kv_heads * head_dim) / 64) workgroups of 64.
struct Uniforms { heads: u32, kv_heads: u32, head_dim: u32, max_tokens: u32, pos: u32 }

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> cos_cache: array<f32>;
@group(0) @binding(2) var<storage, read> sin_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> q_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(5) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(6) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x;
  let half = u.head_dim / 2u;
  let q_len = u.heads * u.head_dim;
  let kv_len = u.kv_heads * u.head_dim;
  if (idx < u.heads * half) {
    let h = idx / half;
    let i = idx % half;
    let c = cos_cache[u.pos * half + i];
    let s = sin_cache[u.pos * half + i];
    let a = h * u.head_dim + i;
    let x1 = qkv[a];
    let x2 = qkv[a + half];
    q_out[a] = x1 * c - x2 * s;
    q_out[a + half] = x2 * c + x1 * s;
  } else if (idx < (u.heads + u.kv_heads) * half) {
    let j = idx - u.heads * half;
    let g = j / half;
    let i = j % half;
    let c = cos_cache[u.pos * half + i];
    let s = sin_cache[u.pos * half + i];
    let a = q_len + g * u.head_dim + i;
    let x1 = qkv[a];
    let x2 = qkv[a + half];
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
