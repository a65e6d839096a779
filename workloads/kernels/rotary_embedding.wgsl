// rotary_embedding: RoPE at one position, non-interleaved (rotate_half), with cos/sin caches as
// in ORT's RotaryEmbedding / GroupQueryAttention (cos_cache, sin_cache: [max_tokens, head_dim/2]).
//   half = head_dim / 2, c = cos_cache[pos * half + i], s = sin_cache[pos * half + i]
//   y[h, i]        = x[h, i] * c - x[h, i + half] * s                     i < half
//   y[h, i + half] = x[h, i + half] * c + x[h, i] * s
// bindings:
//   0  x          storage read        array<f32>  heads * head_dim
//   1  cos_cache  storage read        array<f32>  max_tokens * head_dim / 2
//   2  sin_cache  storage read        array<f32>  max_tokens * head_dim / 2
//   3  y          storage read_write  array<f32>  heads * head_dim   (every element written)
//   4  u          uniform             {heads: u32, head_dim: u32, pos: u32}
// dispatch: ceil(heads * head_dim / 2 / 64) workgroups of 64; one invocation per (h, i).
struct Uniforms { heads: u32, head_dim: u32, pos: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> cos_cache: array<f32>;
@group(0) @binding(2) var<storage, read> sin_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = u.head_dim / 2u;
  let idx = gid.x;
  if (idx >= u.heads * half) { return; }
  let h = idx / half;
  let i = idx % half;
  let c = cos_cache[u.pos * half + i];
  let s = sin_cache[u.pos * half + i];
  let a = h * u.head_dim + i;
  let x1 = x[a];
  let x2 = x[a + half];
  y[a] = x1 * c - x2 * s;
  y[a + half] = x2 * c + x1 * s;
}
