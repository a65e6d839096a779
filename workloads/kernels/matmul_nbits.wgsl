// matmul_nbits: int4 block-quantised matrix × vector, like ORT's MatMulNBits (bits 4, block 32,
// no zero_points input, so zero point 8; onnxruntime/contrib_ops/webgpu/quantization/matmul_nbits.cc).
//   y[n] = sum_k x[k] * ((q[n, k] - 8) * scales[n, k / 32])          n < N, k < K, K % 32 == 0
// bindings (inputs, outputs, then the uniform, as the ORT WebGPU EP binds them):
//   0  x       storage read        array<f32>  K
//   1  b       storage read        array<u32>  N * K / 8   row n = K/8 words; word j holds
//                                              k = 8j .. 8j+7, element 8j+i in bits 4i..4i+3
//                                              (ORT's uint8 [N, K/32, 16] blob, read as u32 LE)
//   2  scales  storage read        array<f32>  N * K / 32
//   3  y       storage read_write  array<f32>  N            (every element written)
//   4  u       uniform             {k: u32, n: u32}
// dispatch: ceil(N / 64) workgroups of 64; one invocation per output row, k ascending.
struct Uniforms { k: u32, n: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> u: Uniforms;

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
  y[n] = acc;
}
