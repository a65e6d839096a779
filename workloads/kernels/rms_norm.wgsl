// rms_norm: RMSNorm over each row (ORT SimplifiedLayerNormalization; also the per-head q/k norm
// of Qwen3-style attention when rows = heads and n = head_dim).
//   y[r, i] = x[r, i] * inverseSqrt(sum_j x[r, j]^2 / n + eps) * weight[i]      r < rows, i < n
// bindings:
//   0  x       storage read        array<f32>  rows * n
//   1  weight  storage read        array<f32>  n
//   2  y       storage read_write  array<f32>  rows * n   (every element written)
//   3  u       uniform             {n: u32, rows: u32, eps: f32}
// dispatch: rows workgroups of 64. Sum of squares: lane l adds x[l], x[l + 64], ... in order,
// then a tree over the 64 lanes (stride 32, 16, ..., 1); reference.js sums in the same order.
struct Uniforms { n: u32, rows: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> u: Uniforms;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * u.n;
  var s = 0.0;
  for (var i = lid; i < u.n; i += 64u) {
    let v = x[base + i];
    s = s + v * v;
  }
  partial[lid] = s;
  workgroupBarrier();
  for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
    if (lid < stride) {
      partial[lid] = partial[lid] + partial[lid + stride];
    }
    workgroupBarrier();
  }
  let inv = inverseSqrt(partial[0] / f32(u.n) + u.eps);
  for (var i = lid; i < u.n; i += 64u) {
    y[base + i] = x[base + i] * inv * weight[i];
  }
}
