// attention_scores: q·k over the cached positions 0..total_len-1, grouped-query (head h reads
// kv head h / (heads / kv_heads)), scaled after the dot product.
//   scores[h * total_len + t] = (sum_d q[h * head_dim + d] * k_cache[(g * max_tokens + t) * head_dim + d]) * scale
// bindings:
//   0  q        storage read        array<f32>  heads * head_dim
//   1  k_cache  storage read        array<f32>  kv_heads * max_tokens * head_dim
//   2  scores   storage read_write  array<f32>  heads * total_len, packed (stride total_len);
//                                   the buffer is sized heads * max_tokens (every element of
//                                   the [heads, total_len] tensor written)
//   3  u        uniform             {heads, kv_heads, head_dim, max_tokens, total_len: u32, scale: f32}
// dispatch: ceil(heads * total_len / 64) workgroups of 64; d ascending.
struct Uniforms { heads: u32, kv_heads: u32, head_dim: u32, max_tokens: u32, total_len: u32, scale: f32 }

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k_cache: array<f32>;
@group(0) @binding(2) var<storage, read_write> scores: array<f32>;
@group(0) @binding(3) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x;
  if (idx >= u.heads * u.total_len) { return; }
  let h = idx / u.total_len;
  let t = idx % u.total_len;
  let g = h / (u.heads / u.kv_heads);
  let qb = h * u.head_dim;
  let kb = (g * u.max_tokens + t) * u.head_dim;
  var acc = 0.0;
  for (var d = 0u; d < u.head_dim; d++) {
    acc = acc + q[qb + d] * k_cache[kb + d];
  }
  scores[idx] = acc * u.scale;
}
