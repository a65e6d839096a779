// gather: embedding lookup of one token (ORT Gather on axis 0 of the embedding table).
//   y[i] = table[token * hidden + i]                                    i < hidden
// bindings:
//   0  table  storage read        array<f32>  vocab * hidden
//   1  y      storage read_write  array<f32>  hidden   (every element written)
//   2  u      uniform             {hidden: u32, token: u32}
// The token id travels in the uniform (ORT uploads input_ids from the CPU each run).
// dispatch: ceil(hidden / 64) workgroups of 64.
struct Uniforms { hidden: u32, token: u32 }

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> u: Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= u.hidden) { return; }
  y[i] = table[u.token * u.hidden + i];
}
