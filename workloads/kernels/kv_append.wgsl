// kv_append: write one position's keys or values into a preallocated max-length KV cache, like
// ORT's GroupQueryAttention with past_present_share_buffer (present = past, BNSH layout
// [kv_heads, max_tokens, head_dim]).
//   cache[(h * max_tokens + pos) * head_dim + d] = src[h * head_dim + d]   h < kv_heads, d < head_dim
// bindings:
//   0  src    storage read        array<f32>  kv_heads * head_dim
//   1  cache  storage read_write  array<f32>  kv_heads * max_tokens * head_dim
//   2  u      uniform             {kv_heads: u32, head_dim: u32, max_tokens: u32, pos: u32}
// The cache is state, not a fresh output: this writes every element of position pos; positions
// < pos hold earlier tokens, positions > pos are never read.
// dispatch: ceil(kv_heads * head_dim / 64) workgroups of 64.
struct Uniforms { kv_heads: u32, head_dim: u32, max_tokens: u32, pos: u32 }

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> cache: array<f32>;
@group(0) @binding(2) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x;
  if (idx >= u.kv_heads * u.head_dim) { return; }
  let h = idx / u.head_dim;
  let d = idx % u.head_dim;
  cache[(h * u.max_tokens + u.pos) * u.head_dim + d] = src[idx];
}
