// Bind groups of a chosen size (--param bindings_per_bind_group=N, 2–16): each kernel gets extra
// bindings up to N entries, so every dispatch's bind group has max(N, its own bindings) entries
// without changing the math. The question: does the cost of a bind group (createBindGroup time,
// native bytes: WebKit's argument buffer grows with its entries, references.md "Bind group
// lifetime in the engines") depend on how many buffers it binds?
//
// A kernel binds its inputs, outputs, then one uniform block (ops.js), at bindings 0..own-1.
// Padding bindings follow: read-only storage buffers first (`var<storage, read> pad_sK:
// array<u32>`), up to the device's maxStorageBuffersPerShaderStage, then uniform buffers
// (`var<uniform> pad_uK: vec4<u32>`) up to maxUniformBuffersPerShaderStage. Each is statically
// used by a phony assignment at the top of main (`_ = pad_s0[0];`), so the 'auto' layout keeps
// it (WebGPU spec, "Default pipeline layout": only statically used bindings are in it). Every
// padding binding binds one shared 16-byte buffer of its kind.

import { OPS } from './ops.js';

/**
 * How many padding bindings an op gets: {storage, uniform}. `own` bindings are the op's inputs,
 * outputs and its uniform buffer. Throws when the limits cannot hold `total` bindings.
 */
export function paddingFor(op, total, limits) {
  const { inputs, outputs } = OPS[op];
  const own = inputs + outputs + 1;
  const extra = Math.max(0, total - own);
  const storage = Math.max(0, Math.min(extra, limits.maxStorageBuffersPerShaderStage - inputs - outputs));
  const uniform = extra - storage;
  if (uniform > limits.maxUniformBuffersPerShaderStage - 1) {
    throw new Error(`bindings_per_bind_group=${total}: ${op} would need ${uniform + 1} uniform buffers per stage `
      + `(limit ${limits.maxUniformBuffersPerShaderStage})`);
  }
  return { own, storage, uniform };
}

/** `code` (a kernel of OPS[op]) with `pad` = paddingFor(...) padding bindings added. */
export function padKernel(code, pad) {
  if (!pad.storage && !pad.uniform) return code;
  const decls = [];
  const uses = [];
  let binding = pad.own;
  for (let k = 0; k < pad.storage; k++) {
    decls.push(`@group(0) @binding(${binding++}) var<storage, read> pad_s${k}: array<u32>;`);
    uses.push(`_ = pad_s${k}[0];`);
  }
  for (let k = 0; k < pad.uniform; k++) {
    decls.push(`@group(0) @binding(${binding++}) var<uniform> pad_u${k}: vec4<u32>;`);
    uses.push(`_ = pad_u${k};`);
  }
  const main = code.search(/\bfn\s+main\s*\(/);
  const open = main < 0 ? -1 : code.indexOf('{', main);
  if (open < 0) throw new Error('padKernel: no `fn main(...) {` in the kernel');
  return `${code.slice(0, open + 1)}\n  ${uses.join(' ')}${code.slice(open + 1)}\n// padding bindings (kernel-padding.js)\n${decls.join('\n')}\n`;
}

/** The buffers a padded dispatch binds after its own: pad.storage × storage, pad.uniform × uniform. */
export function paddingBuffers(pad, buffers) {
  const out = [];
  for (let k = 0; k < pad.storage; k++) out.push(buffers.storage);
  for (let k = 0; k < pad.uniform; k++) out.push(buffers.uniform);
  return out;
}
