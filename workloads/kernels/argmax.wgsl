// argmax: index of the largest logit (greedy decoding), ties to the lowest index.
//   out[0] = argmax_i x[i];  out[1] = bitcast<u32>(x[out[0]])             i < n
// bindings:
//   0  x    storage read        array<f32>  n
//   1  out  storage read_write  array<u32>  2   (every element written)
//   2  u    uniform             {n: u32}
// dispatch: 1 workgroup of 64. Lane l scans x[l], x[l + 64], ... keeping the first maximum, then a
// tree over the 64 lanes (stride 32, ..., 1) preferring the lower index on equal values.
struct Uniforms { n: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> u: Uniforms;

var<workgroup> best_value: array<f32, 64>;
var<workgroup> best_index: array<u32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
  var bv = -3.4028234663852886e38;
  var bi = 0xffffffffu;
  for (var i = lid; i < u.n; i += 64u) {
    let v = x[i];
    if (bi == 0xffffffffu || v > bv) {
      bv = v;
      bi = i;
    }
  }
  best_value[lid] = bv;
  best_index[lid] = bi;
  workgroupBarrier();
  for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
    if (lid < stride) {
      let ov = best_value[lid + stride];
      let oi = best_index[lid + stride];
      let mi = best_index[lid];
      if (oi != 0xffffffffu && (mi == 0xffffffffu || ov > best_value[lid] || (ov == best_value[lid] && oi < mi))) {
        best_value[lid] = ov;
        best_index[lid] = oi;
      }
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    out[0] = best_index[0];
    out[1] = bitcast<u32>(best_value[0]);
  }
}
