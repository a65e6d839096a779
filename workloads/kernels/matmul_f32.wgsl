// matmul_f32: f32 matrix × vector (the lm_head; ORT MatMul with a [K, N] initializer, stored
// here transposed so a row is contiguous).
//   y[n] = sum_k w[n * K + k] * x[k]                                  n < N, k < K
// bindings:
//   0  x  storage read        array<f32>  K
//   1  w  storage read        array<f32>  N * K   (row-major, row n = output n)
//   2  y  storage read_write  array<f32>  N       (every element written)
//   3  u  uniform             {k: u32, n: u32}
// dispatch: ceil(N / 64) workgroups of 64; one invocation per output row, k ascending.
struct Uniforms { k: u32, n: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n = gid.x;
  if (n >= u.n) { return; }
  let row = n * u.k;
  var acc = 0.0;
  for (var k = 0u; k < u.k; k++) {
    acc = acc + w[row + k] * x[k];
  }
  y[n] = acc;
}
