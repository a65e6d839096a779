// The dispatch paths an engine author chooses between to stop creating a bind group per
// dispatch (issue 21; shared/references.md, "onnxruntime field report": "cache bind groups …
// or keep one per node … the uniform buffer … written at a dynamic offset into a shared buffer";
// "Remedies engines chose": immediates). The executor (executor.js) takes one of them per cell:
//
//   dynamic-offset  one shared uniform buffer per generate call, node i's parameters at byte
//                   i × slot (slot: the block rounded up to minUniformBufferOffsetAlignment,
//                   256 on SwiftShader), written only when they change; each kernel's pipeline
//                   has an explicit layout whose uniform binding has hasDynamicOffset, and each
//                   node keeps one bind group (its storage buffers + the shared buffer, bound at
//                   offset 0 with the block's size), reused while its buffers come back the same;
//                   setBindGroup(0, group, [i × slot]).
//   immediates      the kernels read their parameters from WGSL's immediate address space
//                   (`var<immediate> u: Uniforms;` in place of the uniform binding); each dispatch
//                   sets them with pass.setImmediates(0, data); bind groups hold storage buffers
//                   only, one per node, reused the same way. Needs the device limit
//                   maxImmediateSize ≥ the largest block (24 bytes here; Chromium 156 has 64) and
//                   setImmediates on the pass; where either is missing the cell is skipped.
//
// Nothing here reads `navigator`: the same code runs in a browser worker and in Node on Dawn.

/** Largest parameter block of any op, bytes (ops.js: at most 6 four-byte fields): the immediates
 *  a dispatch sets; as a uniform buffer it is rounded up to 16 (ops.js uniformBytes: 32). */
export const MAX_BLOCK_BYTES = 24;
const MAX_UNIFORM_BLOCK_BYTES = 32;

/** The immediate-address-space feature of WGSL (WGSL spec, language extensions). */
export const IMMEDIATES_WGSL_FEATURE = 'immediate_address_space';

/**
 * Can `adapter` run the immediates variant? Returns {ok: true, maxImmediateSize} or {ok: false,
 * reason} naming what is missing. `wgslFeatures`: the GPU's wgslLanguageFeatures when the caller
 * has them (a browser's navigator.gpu), else null (not checked here; compilation decides).
 * The pass method is checked on a device (passHasImmediates), not on a global prototype, so the
 * check works where the WebGPU classes are not globals (Dawn in Node).
 */
export function immediatesSupport(adapter, wgslFeatures = null) {
  const max = adapter?.limits?.maxImmediateSize;
  if (!(max > 0)) {
    return { ok: false, reason: `the adapter has no immediates (limits.maxImmediateSize is ${max === undefined ? 'not defined' : max})` };
  }
  if (max < MAX_BLOCK_BYTES) return { ok: false, reason: `maxImmediateSize ${max} < ${MAX_BLOCK_BYTES} bytes, the largest parameter block` };
  if (wgslFeatures && typeof wgslFeatures.has === 'function' && !wgslFeatures.has(IMMEDIATES_WGSL_FEATURE)) {
    return { ok: false, reason: `WGSL language feature '${IMMEDIATES_WGSL_FEATURE}' is not in wgslLanguageFeatures` };
  }
  return { ok: true, maxImmediateSize: max };
}

/** Does a compute pass of `device` have setImmediates? (Encodes an empty pass and drops it.) */
export function passHasImmediates(device) {
  const pass = device.createCommandEncoder({ label: 'immediates check' }).beginComputePass();
  const has = typeof pass.setImmediates === 'function';
  pass.end();
  return has;
}

const UNIFORM_DECL = /@group\(0\)\s*@binding\((\d+)\)\s*var<uniform>\s+u\s*:\s*Uniforms\s*;/;

/** A kernel's WGSL with its uniform block `u` moved to the immediate address space. Throws when
 *  the kernel has no `@group(0) @binding(N) var<uniform> u: Uniforms;`. */
export function immediatesKernel(code) {
  if (!UNIFORM_DECL.test(code)) throw new Error('immediates: the kernel has no `var<uniform> u: Uniforms` binding to move');
  return code.replace(UNIFORM_DECL, 'var<immediate> u: Uniforms; // issue 21: parameters via setImmediates');
}

/**
 * An explicit bind group layout for a kernel's group 0, read from its declarations
 * (`@group(0) @binding(N) var<storage, read|read_write>` / `var<uniform>`), with
 * hasDynamicOffset on the uniform block `u`. Returns GPUBindGroupLayoutEntry[] in binding order.
 */
export function dynamicOffsetLayoutEntries(code) {
  const entries = [];
  const re = /@group\(0\)\s*@binding\((\d+)\)\s*var<([^>]+)>\s+(\w+)\s*:/g;
  for (const m of code.matchAll(re)) {
    const space = m[2].replace(/\s+/g, '');
    const type = space === 'uniform' ? 'uniform' : space === 'storage,read_write' ? 'storage'
      : space === 'storage,read' || space === 'storage' ? 'read-only-storage' : null;
    if (!type) throw new Error(`dynamic-offset: binding ${m[1]} has an address space this layout cannot express: var<${m[2]}>`);
    const buffer = { type };
    if (type === 'uniform' && m[3] === 'u') buffer.hasDynamicOffset = true;
    entries.push({ binding: Number(m[1]), visibility: globalThis.GPUShaderStage?.COMPUTE ?? 4, buffer });
  }
  if (!entries.some((e) => e.buffer.hasDynamicOffset)) throw new Error('dynamic-offset: the kernel has no uniform block `u`');
  return entries.sort((a, b) => a.binding - b.binding);
}

/**
 * The shared uniform buffer of the dynamic-offset variant: node i's block at byte i × slot.
 * write(i, bytes) writes a node's block only when it differs from what that slot holds.
 */
export class SharedUniforms {
  /**
   * @param device GPUDevice; @param nodes number of dispatches per token;
   * @param alignment the device's minUniformBufferOffsetAlignment (bytes); @param ids BufferIds
   */
  constructor(device, nodes, alignment, ids) {
    this.slot = Math.ceil(MAX_UNIFORM_BLOCK_BYTES / alignment) * alignment;
    this.buffer = device.createBuffer({
      label: 'uniforms.shared', size: nodes * this.slot, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    ids.assign(this.buffer);
    this.queue = device.queue;
    this.last = new Array(nodes).fill(null);
  }

  /** Byte offset of node i's block (its dynamic offset). */
  offset(i) {
    return i * this.slot;
  }

  /** Write node i's block (an ArrayBuffer) if it changed; returns true when it wrote. */
  write(i, bytes) {
    const words = new Uint32Array(bytes);
    const last = this.last[i];
    if (last && last.length === words.length && words.every((w, k) => w === last[k])) return false;
    this.queue.writeBuffer(this.buffer, this.offset(i), bytes);
    this.last[i] = words.slice();
    return true;
  }
}

/**
 * One bind group per node, kept while the node binds the same buffers (the field report's second
 * remedy): get(i, layout, entries, label) returns node i's group, creating a new one only when
 * an entry's buffer, offset or size changed. `created` counts creations.
 */
export class NodeBindGroups {
  constructor(device, ids, nodes) {
    this.device = device;
    this.ids = ids;
    this.groups = new Array(nodes).fill(null); // {key, group}
    this.created = 0;
  }

  /** @param entries [{binding, buffer, offset?, size?}] */
  get(i, layout, entries, label) {
    let key = '';
    for (const e of entries) key += `${e.binding}:${this.ids.get(e.buffer)}@${e.offset ?? 0}+${e.size ?? e.buffer.size}|`;
    const have = this.groups[i];
    if (have && have.key === key) return have.group;
    const group = this.device.createBindGroup({
      label, layout, entries: entries.map((e) => ({ binding: e.binding, resource: resourceOf(e) })),
    });
    this.groups[i] = { key, group };
    this.created += 1;
    return group;
  }

  /** Live bind groups held (one per node that has dispatched). */
  get size() {
    return this.groups.filter(Boolean).length;
  }
}

/** {buffer, offset?, size?} → a GPUBufferBinding. */
export function resourceOf(e) {
  const r = { buffer: e.buffer };
  if (e.offset) r.offset = e.offset;
  if (e.size !== undefined) r.size = e.size;
  return r;
}
