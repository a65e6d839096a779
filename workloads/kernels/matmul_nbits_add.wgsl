// matmul_nbits_add: int4 matmul with the residual connection fused into its epilogue (o_proj and
// down_proj of the decode graph's `fused` variant).
//   y[n] = residual[n] + sum_k x[k] * ((q[n, k] - 8) * scales[n, k / 32])     n < N, k < K, K % 32 == 0
// Same arithmetic as matmul_nbits.wgsl followed by add.wgsl (a = residual, b = the product): the
// dot product runs k ascending and f32 addition is commutative, so y is bit-identical.
// bindings:
//   0  x         storage read        array<f32>  K
//   1  b         storage read        array<u32>  N * K / 8  (layout of matmul_nbits.wgsl)
//   2  scales    storage read        array<f32>  N * K / 32
//   3  residual  storage read        array<f32>  N
//   4  y         storage read_write  array<f32>  N   (every element written)
//   5  u         uniform             {k: u32, n: u32}
// dispatch: ceil(N / 64) workgroups of 64; one invocation per output row.
struct Uniforms { k: u32, n: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read> residual: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n = gid.x;
  if (n >= u.n) { return; }
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
        acc = acc + x[k0 + i] * ((q - 8.0) * scale);
      }
    }
  }
  y[n] = residual[n] + acc;
}
