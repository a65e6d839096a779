// rms_norm_matmul_f32: the final RMSNorm fused into the f32 lm_head.
//   inv = inverseSqrt(sum_j x[j]^2 / K + eps)
//   y[n] = sum_k w[n * K + k] * (x[k] * inv * weight[k])               n < N, k < K
// Equivalent to rms_norm.wgsl (rows = 1) followed by matmul_f32.wgsl.
// No barriers and no workgroup memory: every invocation replays rms_norm.wgsl's 64-lane reduction
// by itself (lane sums l = 0..63 of x[l], x[l + 64], ... in order, then the tree 32, 16, ..., 1)
// and normalises x[k] with rms_norm's expression (x[k] * inv) * weight[k] inside the dot product,
// so every operation and its order are those of the unfused kernels: y is bit-identical to theirs
// on the same device. (The reduction is redone per output row: O(K) extra work, no sync; a shared
// workgroup copy would need barriers, which SwiftShader runs as coroutines, much slower.)
// bindings:
//   0  x       storage read        array<f32>  K
//   1  weight  storage read        array<f32>  K        (the norm's scale)
//   2  w       storage read        array<f32>  N * K    (row-major, row n = output n)
//   3  y       storage read_write  array<f32>  N        (every element written)
//   4  u       uniform             {k: u32, n: u32, eps: f32}
// dispatch: ceil(N / 64) workgroups of 64; one invocation per output row, k ascending.
struct Uniforms { k: u32, n: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> u: Uniforms;

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
  let row = n * u.k;
  var acc = 0.0;
  for (var k = 0u; k < u.k; k++) {
    acc = acc + w[row + k] * (x[k] * inv * weight[k]);
  }
  y[n] = acc;
}
