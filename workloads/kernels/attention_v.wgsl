// attention_v: probabilities × cached values, grouped-query (head h reads kv head
// h / (heads / kv_heads)).
//   out[h * head_dim + d] = sum_t probs[h * total_len + t] * v_cache[(g * max_tokens + t) * head_dim + d]
// bindings:
//   0  probs    storage read        array<f32>  heads * total_len (packed, as attention_scores writes)
//   1  v_cache  storage read        array<f32>  kv_heads * max_tokens * head_dim
//   2  out      storage read_write  array<f32>  heads * head_dim   (every element written)
//   3  u        uniform             {heads, kv_heads, head_dim, max_tokens, total_len: u32}
// dispatch: ceil(heads * head_dim / 64) workgroups of 64; t ascending.
struct Uniforms { heads: u32, kv_heads: u32, head_dim: u32, max_tokens: u32, total_len: u32 }

@group(0) @binding(0) var<storage, read> probs: array<f32>;
@group(0) @binding(1) var<storage, read> v_cache: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x;
  if (idx >= u.heads * u.head_dim) { return; }
  let h = idx / u.head_dim;
  let d = idx % u.head_dim;
  let g = h / (u.heads / u.kv_heads);
  let pb = h * u.total_len;
  let vb = g * u.max_tokens * u.head_dim + d;
  var acc = 0.0;
  for (var t = 0u; t < u.total_len; t++) {
    acc = acc + probs[pb + t] * v_cache[vb + t * u.head_dim];
  }
  out[idx] = acc;
}
