// Op table: one entry per WGSL kernel in workloads/kernels/.
//
// Each op names its kernel file, the uniform block's fields in declaration order (all 4-byte
// scalars; the block is padded to a multiple of 16 bytes, as the ORT WebGPU EP rounds its uniform
// buffers: onnxruntime/core/providers/webgpu/webgpu_context.cc, WebGpuContext::Run), and the
// workgroup count it dispatches for given uniform values. Bindings are the node's inputs, then its
// outputs, then the uniform buffer (same order as the EP's bind group entries).

export const WORKGROUP_SIZE = 64;
const groups = (n) => Math.ceil(n / WORKGROUP_SIZE);

export const OPS = {
  gather: {
    kernel: 'gather.wgsl', inputs: 1, outputs: 1,
    uniforms: [['hidden', 'u32'], ['token', 'u32']],
    workgroups: (u) => [groups(u.hidden)],
  },
  rms_norm: {
    kernel: 'rms_norm.wgsl', inputs: 2, outputs: 1,
    uniforms: [['n', 'u32'], ['rows', 'u32'], ['eps', 'f32']],
    workgroups: (u) => [u.rows],
  },
  matmul_nbits: {
    kernel: 'matmul_nbits.wgsl', inputs: 3, outputs: 1,
    uniforms: [['k', 'u32'], ['n', 'u32']],
    workgroups: (u) => [groups(u.n)],
  },
  matmul_f32: {
    kernel: 'matmul_f32.wgsl', inputs: 2, outputs: 1,
    uniforms: [['k', 'u32'], ['n', 'u32']],
    workgroups: (u) => [groups(u.n)],
  },
  rotary_embedding: {
    kernel: 'rotary_embedding.wgsl', inputs: 3, outputs: 1,
    uniforms: [['heads', 'u32'], ['head_dim', 'u32'], ['pos', 'u32']],
    workgroups: (u) => [groups((u.heads * u.head_dim) / 2)],
  },
  kv_append: {
    kernel: 'kv_append.wgsl', inputs: 1, outputs: 1,
    uniforms: [['kv_heads', 'u32'], ['head_dim', 'u32'], ['max_tokens', 'u32'], ['pos', 'u32']],
    workgroups: (u) => [groups(u.kv_heads * u.head_dim)],
  },
  attention_scores: {
    kernel: 'attention_scores.wgsl', inputs: 2, outputs: 1,
    uniforms: [['heads', 'u32'], ['kv_heads', 'u32'], ['head_dim', 'u32'], ['max_tokens', 'u32'],
      ['total_len', 'u32'], ['scale', 'f32']],
    workgroups: (u) => [groups(u.heads * u.total_len)],
  },
  softmax: {
    kernel: 'softmax.wgsl', inputs: 1, outputs: 1,
    uniforms: [['rows', 'u32'], ['n', 'u32']],
    workgroups: (u) => [u.rows],
  },
  attention_v: {
    kernel: 'attention_v.wgsl', inputs: 2, outputs: 1,
    uniforms: [['heads', 'u32'], ['kv_heads', 'u32'], ['head_dim', 'u32'], ['max_tokens', 'u32'],
      ['total_len', 'u32']],
    workgroups: (u) => [groups(u.heads * u.head_dim)],
  },
  silu_mul: {
    kernel: 'silu_mul.wgsl', inputs: 2, outputs: 1,
    uniforms: [['n', 'u32']],
    workgroups: (u) => [groups(u.n)],
  },
  add: {
    kernel: 'add.wgsl', inputs: 2, outputs: 1,
    uniforms: [['n', 'u32']],
    workgroups: (u) => [groups(u.n)],
  },
  argmax: {
    kernel: 'argmax.wgsl', inputs: 1, outputs: 1,
    uniforms: [['n', 'u32']],
    workgroups: () => [1],
  },
  // Fused ops of the `fused` graph (graph-fused.js); each kernel states its unfused equivalent.
  rms_norm_matmul_nbits: {
    kernel: 'rms_norm_matmul_nbits.wgsl', inputs: 4, outputs: 1,
    uniforms: [['k', 'u32'], ['n', 'u32'], ['eps', 'f32']],
    workgroups: (u) => [groups(u.n)],
  },
  rms_norm_matmul_nbits_silu_mul: {
    kernel: 'rms_norm_matmul_nbits_silu_mul.wgsl', inputs: 6, outputs: 1,
    uniforms: [['k', 'u32'], ['n', 'u32'], ['eps', 'f32']],
    workgroups: (u) => [groups(u.n)],
  },
  matmul_nbits_add: {
    kernel: 'matmul_nbits_add.wgsl', inputs: 4, outputs: 1,
    uniforms: [['k', 'u32'], ['n', 'u32']],
    workgroups: (u) => [groups(u.n)],
  },
  rms_norm_matmul_f32: {
    kernel: 'rms_norm_matmul_f32.wgsl', inputs: 3, outputs: 1,
    uniforms: [['k', 'u32'], ['n', 'u32'], ['eps', 'f32']],
    workgroups: (u) => [groups(u.n)],
  },
  rope_kv_append: {
    kernel: 'rope_kv_append.wgsl', inputs: 3, outputs: 3,
    uniforms: [['heads', 'u32'], ['kv_heads', 'u32'], ['head_dim', 'u32'], ['max_tokens', 'u32'], ['pos', 'u32']],
    workgroups: (u) => [groups(Math.max(((u.heads + u.kv_heads) * u.head_dim) / 2, u.kv_heads * u.head_dim))],
  },
  qk_norm_rope_kv_append: {
    kernel: 'qk_norm_rope_kv_append.wgsl', inputs: 5, outputs: 3,
    uniforms: [['heads', 'u32'], ['kv_heads', 'u32'], ['head_dim', 'u32'], ['max_tokens', 'u32'], ['pos', 'u32'],
      ['eps', 'f32']],
    workgroups: (u) => [groups(Math.max(((u.heads + u.kv_heads) * u.head_dim) / 2, u.kv_heads * u.head_dim))],
  },
};

/** Uniform block size in bytes: 4 bytes a field, rounded up to 16. */
export function uniformBytes(op) {
  return Math.ceil((OPS[op].uniforms.length * 4) / 16) * 16;
}

/**
 * Resolve a node's uniform values for one token. A value is a number, or a string naming a
 * per-token input ('pos', 'total_len', 'token').
 */
export function resolveUniforms(node, tokenInputs) {
  const out = {};
  for (const [name, value] of Object.entries(node.uniforms)) {
    out[name] = typeof value === 'string' ? tokenInputs[value] : value;
  }
  return out;
}

/** Pack resolved uniform values into `bytes` (an ArrayBuffer of uniformBytes(op)). */
export function packUniforms(op, values, bytes) {
  const u32 = new Uint32Array(bytes);
  const f32 = new Float32Array(bytes);
  u32.fill(0);
  OPS[op].uniforms.forEach(([name, type], i) => {
    const v = values[name];
    if (v === undefined) throw new Error(`uniform ${op}.${name} has no value`);
    if (type === 'f32') f32[i] = v;
    else u32[i] = v;
  });
  return bytes;
}
