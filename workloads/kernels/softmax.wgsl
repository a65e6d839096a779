// softmax: numerically stable softmax over each row.
//   m = max_j x[r, j];  s = sum_j exp(x[r, j] - m);  y[r, i] = exp(x[r, i] - m) / s   r < rows, i < n
// bindings:
//   0  x  storage read        array<f32>  rows * n
//   1  y  storage read_write  array<f32>  rows * n   (every element written)
//   2  u  uniform             {rows: u32, n: u32}
// dispatch: rows workgroups of 64. Max and sum: lane l takes x[l], x[l + 64], ... in order, then a
// tree over the 64 lanes (stride 32, ..., 1); reference.js reduces in the same order.
struct Uniforms { rows: u32, n: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> u: Uniforms;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * u.n;
  var m = -3.4028234663852886e38;
  for (var i = lid; i < u.n; i += 64u) {
    m = max(m, x[base + i]);
  }
  partial[lid] = m;
  workgroupBarrier();
  for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
    if (lid < stride) {
      partial[lid] = max(partial[lid], partial[lid + stride]);
    }
    workgroupBarrier();
  }
  let row_max = partial[0];
  workgroupBarrier();
  var s = 0.0;
  for (var i = lid; i < u.n; i += 64u) {
    s = s + exp(x[base + i] - row_max);
  }
  partial[lid] = s;
  workgroupBarrier();
  for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
    if (lid < stride) {
      partial[lid] = partial[lid] + partial[lid + stride];
    }
    workgroupBarrier();
  }
  let row_sum = partial[0];
  for (var i = lid; i < u.n; i += 64u) {
    y[base + i] = exp(x[base + i] - row_max) / row_sum;
  }
}
