// add: elementwise sum (the residual connection).
//   y[i] = a[i] + b[i]                                                  i < n
// bindings:
//   0  a  storage read        array<f32>  n
//   1  b  storage read        array<f32>  n
//   2  y  storage read_write  array<f32>  n   (every element written)
//   3  u  uniform             {n: u32}
// dispatch: ceil(n / 64) workgroups of 64.
struct Uniforms { n: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= u.n) { return; }
  y[i] = a[i] + b[i];
}
