// rms_norm_matmul_nbits_silu_mul: the MLP's input half in one dispatch: RMSNorm of the row, the
// gate and up int4 matmuls, and SwiGLU's silu(gate) * up (ORT's matmul_nbits_silu_mul program
// fuses the same ops).
//   inv = inverseSqrt(sum_j x[j]^2 / K + eps);  xn[k] = x[k] * inv * weight[k]
//   g[n] = sum_k xn[k] * ((qg[n, k] - 8) * gate_scales[n, k / 32])
//   v[n] = sum_k xn[k] * ((qu[n, k] - 8) * up_scales[n, k / 32])
//   y[n] = g[n] / (1 + exp(-g[n])) * v[n]                               n < N, k < K, K % 32 == 0
// Equivalent to rms_norm.wgsl, matmul_nbits.wgsl twice and silu_mul.wgsl.
// No barriers and no workgroup memory: every invocation replays rms_norm.wgsl's 64-lane reduction
// by itself (lane sums l = 0..63 of x[l], x[l + 64], ... in order, then the tree 32, 16, ..., 1)
// and normalises x[k] with rms_norm's expression (x[k] * inv) * weight[k] inside the dot product,
// so every operation and its order are those of the unfused kernels: y is bit-identical to theirs
// on the same device. (The reduction is redone per output row: O(K) extra work, no sync; a shared
// workgroup copy would need barriers, which SwiftShader runs as coroutines, much slower.)
// bindings:
//   0  x            storage read        array<f32>  K
//   1  weight       storage read        array<f32>  K
//   2  gate_b       storage read        array<u32>  N * K / 8
//   3  gate_scales  storage read        array<f32>  N * K / 32
//   4  up_b         storage read        array<u32>  N * K / 8
//   5  up_scales    storage read        array<f32>  N * K / 32
//   6  y            storage read_write  array<f32>  N   (every element written)
//   7  u            uniform             {k: u32, n: u32, eps: f32}
// Both dot products run in one loop (each still k ascending), sharing the normalised x[k].
// dispatch: ceil(N / 64) workgroups of 64; one invocation per output element, k ascending.
struct Uniforms { k: u32, n: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> gate_b: array<u32>;
@group(0) @binding(3) var<storage, read> gate_scales: array<f32>;
@group(0) @binding(4) var<storage, read> up_b: array<u32>;
@group(0) @binding(5) var<storage, read> up_scales: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
@group(0) @binding(7) var<uniform> u: Uniforms;

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
  var acc_g = 0.0;
  var acc_u = 0.0;
  for (var blk = 0u; blk < blocks_per_row; blk++) {
    let scale_g = gate_scales[n * blocks_per_row + blk];
    let scale_u = up_scales[n * blocks_per_row + blk];
    for (var w = 0u; w < 4u; w++) {
      let word_g = gate_b[n * words_per_row + blk * 4u + w];
      let word_u = up_b[n * words_per_row + blk * 4u + w];
      let k0 = blk * 32u + w * 8u;
      for (var i = 0u; i < 8u; i++) {
        let xk = x[k0 + i] * inv * weight[k0 + i];
        let qg = f32((word_g >> (4u * i)) & 0xfu);
        let qu = f32((word_u >> (4u * i)) & 0xfu);
        acc_g = acc_g + xk * ((qg - 8.0) * scale_g);
        acc_u = acc_u + xk * ((qu - 8.0) * scale_u);
      }
    }
  }
  let g = acc_g;
  y[n] = g / (1.0 + exp(-g)) * acc_u;
}
