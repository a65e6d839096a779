// rms_norm_matmul_nbits: RMSNorm of one row fused into the int4 matmul that reads it (the decode
// graph's `fused` QKV projection: q, k and v weights concatenated row-wise, as ORT fuses
// SimplifiedLayerNormalization into MatMulNBits in its matmul_nbits_qkv_sln program).
//   inv = inverseSqrt(sum_j x[j]^2 / K + eps)
//   y[n] = sum_k (x[k] * inv * weight[k]) * ((q[n, k] - 8) * scales[n, k / 32])    n < N, k < K, K % 32 == 0
// Equivalent to rms_norm.wgsl (rows = 1) followed by matmul_nbits.wgsl.
// No barriers and no workgroup memory: every invocation replays rms_norm.wgsl's 64-lane reduction
// by itself (lane sums l = 0..63 of x[l], x[l + 64], ... in order, then the tree 32, 16, ..., 1)
// and normalises x[k] with rms_norm's expression (x[k] * inv) * weight[k] inside the dot product,
// so every operation and its order are those of the unfused kernels: y is bit-identical to theirs
// on the same device. (The reduction is redone per output row: O(K) extra work, no sync; a shared
// workgroup copy would need barriers, which SwiftShader runs as coroutines, much slower.)
// bindings:
//   0  x       storage read        array<f32>  K
//   1  weight  storage read        array<f32>  K          (the norm's scale)
//   2  b       storage read        array<u32>  N * K / 8  (layout of matmul_nbits.wgsl)
//   3  scales  storage read        array<f32>  N * K / 32
//   4  y       storage read_write  array<f32>  N          (every element written)
//   5  u       uniform             {k: u32, n: u32, eps: f32}
// dispatch: ceil(N / 64) workgroups of 64; one invocation per output row, k ascending.
struct Uniforms { k: u32, n: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;
@group(0) @binding(3) var<storage, read> scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> u: Uniforms;

// rms_norm.wgsl's reduction of x[0..k) replayed by one invocation: inverseSqrt(sum x^2 / k + eps).
fn replayed_inv_rms(k: u32, eps: f32) -> f32 {
  var partial: array<f32, 64>;
  for (var l = 0u; l < 64u; l++) {
    var s = 0.0;
    for (var i = l; i < k; i += 64u) {
      let v = x[i];
      s = s + v * v;
    }
    partial[l] = s;
  }
  for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
    for (var l = 0u; l < stride; l++) {
      partial[l] = partial[l] + partial[l + stride];
    }
  }
  return inverseSqrt(partial[0] / f32(k) + eps);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n = gid.x;
  if (n >= u.n) { return; }
  let inv = replayed_inv_rms(u.k, u.eps);
  let words_per_row = u.k / 8u;
  let blocks_per_row = u.k / 32u;
  var acc = 0.0;
  for (var blk = 0u; blk < blocks_per_row; blk++) {
    let scale = scales[n * blocks_per_row + blk];
    for (var w = 0u; w < 4u; w++) {
      let word = b[n * words_per_row + blk * 4u + w];
      let k0 = blk * 32u + w * 8u;
      for (var i = 0u; i < 8u; i++) {
        let q = f32((word >> (4u * i)) & 0xfu);
        acc = acc + (x[k0 + i] * inv * weight[k0 + i]) * ((q - 8.0) * scale);
      }
    }
  }
  y[n] = acc;
}
