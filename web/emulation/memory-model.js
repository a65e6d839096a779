// memory-model.js: the modeled native memory behind emulated WebGPU objects, and the
// per-device ledger that counts it.
//
// What is modeled (see /work/shared/references.md, "Bind group lifetime in the engines"):
//   WebKit, Source/WebGPU/WebGPU/BindGroup.mm: Device::createBindGroup allocates one
//   MTLBuffer in shared storage per shader stage (vertex, fragment, compute) whose
//   layout has bindings, sized by that stage's argument-encoder encoded length; no
//   pooling; the memory is charged to the web content process. It is freed when the
//   native BindGroup is destroyed: after the GPUBindGroup JS wrapper is collected
//   (proxy destructor -> IPC Destruct) and once no command buffer still uses it. The
//   wrapper reports no extra memory cost to JavaScriptCore, so this memory does not
//   push the GC.
//
// Formula (per bind group; "stage" ranges over vertex, fragment, compute):
//   encodedLength(stage) = sum over layout entries visible in stage of argumentBytes[kind]
//                          (default 8 bytes per buffer, sampler or texture argument: one
//                          GPU address / resource id in a Metal argument buffer)
//   stageBytes(stage)    = 0                                       if encodedLength == 0
//                          max(bytesPerStage, roundUp(encodedLength, pageBytes))  otherwise
//                          (pageBytes == 0: no rounding)
//   modeledBytes         = sum over stages of stageBytes(stage)
//
// Defaults: bytesPerStage = 16384, pageBytes = 16384 (one 16 KiB page per stage). Whether
// Metal rounds a small shared-storage MTLBuffer up to a page is not public, so both are
// parameters. The default fits the field report (microsoft/onnxruntime #33750, in
// references.md): ~150,000 uncollected bind groups when iOS killed the page at 2,048 MB,
// i.e. ~14 KB each (2,048 MB / 150,000 = 14.3 KB; one 16 KiB page per compute-only bind
// group gives 150,000 x 16 KiB = 2.29 GiB, the nearest page-granular figure; the report's
// counts are approximate and the page held other memory too). ORT's bind groups are
// compute-only, so each costs one stage.
//
// Buffers: a valid GPUBuffer is charged its size from creation until destroy(), or until
// its wrapper is collected and no live bind group or in-flight command buffer uses it
// (Ledger.buffersLiveBytes; with the bufferRecordsEncoders model also its encoder records:
// Ledger.modeledBufferBytes). WEBKIT_MODELS lists the optional models of older WebKit behaviour.

export const STAGE_VERTEX = 0x1;
export const STAGE_FRAGMENT = 0x2;
export const STAGE_COMPUTE = 0x4;
const STAGES = [['vertex', STAGE_VERTEX], ['fragment', STAGE_FRAGMENT], ['compute', STAGE_COMPUTE]];

export const MODEL_SOURCE =
  'WebKit Source/WebGPU/WebGPU/BindGroup.mm (one shared-storage MTLBuffer per shader stage with ' +
  'bindings, sized by the argument encoder, no pooling, no extra cost reported to JSC); ' +
  'defaults sized to microsoft/onnxruntime #33750 (~150,000 bind groups at a 2,048 MB kill); ' +
  'see /work/shared/references.md';

/**
 * Optional models of WebKit behaviours that changed across versions, each off by default (the
 * emulation's default is the current behaviour) and labelled with where it comes from. An
 * option turns one on: installEmulatedWebGPU(self, {encoderRetainsBindGroups: true}).
 */
export const WEBKIT_MODELS = Object.freeze({
  // A compute pass encoder holds strong references to the bind groups set on it: WebKit
  // Source/WebGPU/WebGPU/ComputePassEncoder.h, m_bindGroups, a map of WeakPtr<BindGroup> in
  // earlier versions and of RefPtr / Ref<const BindGroup> in later ones (references.md: "since
  // 2024, encoders hold strong references to the bind groups they use"). Modeled as: the
  // GPUCommandEncoder wrapper keeps every GPUBindGroup wrapper set on its passes alive until the
  // encoder wrapper (and its pass wrappers) are collected, so an application that keeps encoders
  // referenced keeps their bind groups' native memory.
  encoderRetainsBindGroups: 'webkit-encoder-retains-bind-groups: ComputePassEncoder.h m_bindGroups holds Ref<const BindGroup> (2024 on)',
  // A buffer records every command encoder that used it until it is destroyed: WebKit
  // Source/WebGPU/WebGPU/Buffer.h, Buffer::setCommandEncoder adding to m_commandEncoders (a
  // WeakHashSet<CommandEncoder>), cleared by destroy(); fixed in December 2025 (references.md:
  // "long-lived buffers kept a record of every command encoder that used them until destroyed,
  // so memory grew with encoder count over hours"). Modeled as encoderRecordBytes per
  // (buffer, encoder) pair, charged to the buffer until destroy() or its collection.
  bufferRecordsEncoders: 'webkit-buffer-records-encoders: Buffer.h m_commandEncoders kept until destroy() (before the Dec 2025 fix)',
});

/**
 * Failure modes the emulation models, each labelled with its source; named in
 * emulationStats(device).model.failureModels (and the worker's env sample) when in effect.
 */
export const FAILURE_MODELS = Object.freeze({
  // memory-budget.js, atMemoryBudget 'out-of-memory'
  outOfMemory: 'out-of-memory-at-budget (a model): createBuffer that would take the modeled bytes past memoryBudgetBytes '
    + 'generates a GPUOutOfMemoryError (error scope or uncapturederror) and returns an invalid buffer; the device and page '
    + 'live on (WebGPU spec, createBuffer: a failed allocation generates an out-of-memory error and the buffer is invalid)',
  // resources.js createBindGroup (always on: spec validation, set the limit with limits.maxStorageBufferBindingSize)
  bindingSize: 'binding-size-validation: createBindGroup rejects a storage binding larger than maxStorageBufferBindingSize '
    + '(a uniform one larger than maxUniformBufferBindingSize) with a GPUValidationError and an invalid bind group '
    + '(WebGPU spec, createBindGroup validation)',
  // commands.js GPUComputePassEncoder.setImmediates
  immediates: 'immediates (a model): setImmediates is validated (4-byte alignment, within maxImmediateSize) and counted; '
    + 'no shader runs, so nothing reads it (WebGPU spec setImmediates; Chrome 149–150)',
});

/** Resolve options into a frozen model description. */
export function resolveModel(options = {}) {
  const argumentBytes = {
    buffer: 8,
    sampler: 8,
    texture: 8,
    storageTexture: 8,
    externalTexture: 8,
    ...(options.argumentBytes || {}),
  };
  const bytesPerStage = options.bytesPerStage ?? 16384;
  const pageBytes = options.pageBytes ?? 16384;
  for (const [k, v] of Object.entries({ bytesPerStage, pageBytes, ...argumentBytes })) {
    if (!Number.isInteger(v) || v < 0) throw new TypeError(`memory model: ${k} must be a non-negative integer`);
  }
  const encoderRecordBytes = options.encoderRecordBytes ?? 16;
  if (!Number.isInteger(encoderRecordBytes) || encoderRecordBytes < 0) throw new TypeError('memory model: encoderRecordBytes must be a non-negative integer');
  for (const k of Object.keys(WEBKIT_MODELS)) {
    if (options[k] !== undefined && typeof options[k] !== 'boolean') throw new TypeError(`memory model: ${k} must be true or false`);
  }
  return Object.freeze({
    name: options.modelName ?? 'webkit-bind-group-argument-buffers',
    description:
      'one MTLBuffer per shader stage with bindings; stageBytes = max(bytesPerStage, ' +
      'roundUp(sum of argumentBytes over the stage\'s entries, pageBytes)); freed only when ' +
      'the wrapper is collected and no in-flight work uses it',
    source: MODEL_SOURCE,
    bytesPerStage,
    pageBytes,
    argumentBytes: Object.freeze(argumentBytes),
    reportCostToJs: !!options.reportCostToJs,
    encoderRetainsBindGroups: !!options.encoderRetainsBindGroups,
    bufferRecordsEncoders: !!options.bufferRecordsEncoders,
    // bytes per (buffer, encoder) record: one 8-byte pointer in a hash set at ≤ 50% load; an
    // assumption (WebKit publishes no figure), settable
    encoderRecordBytes,
    webkitModels: Object.freeze(Object.keys(WEBKIT_MODELS).filter((k) => options[k]).map((k) => WEBKIT_MODELS[k])),
    failureModels: Object.freeze([FAILURE_MODELS.bindingSize, FAILURE_MODELS.immediates,
      ...(options.atMemoryBudget === 'out-of-memory' && options.memoryBudgetBytes > 0 ? [FAILURE_MODELS.outOfMemory] : [])]),
  });
}

/** Encoded argument-buffer length per stage for a list of normalized layout entries. */
export function encodedLengths(model, entries) {
  const out = { vertex: 0, fragment: 0, compute: 0 };
  for (const e of entries) {
    const bytes = model.argumentBytes[e.kind] ?? 8;
    for (const [name, bit] of STAGES) if (e.visibility & bit) out[name] += bytes;
  }
  return out;
}

export function stageBytes(model, encodedLength) {
  if (encodedLength <= 0) return 0;
  const rounded = model.pageBytes > 0 ? Math.ceil(encodedLength / model.pageBytes) * model.pageBytes : encodedLength;
  return Math.max(model.bytesPerStage, rounded);
}

/** Modeled native bytes of one bind group created from a layout with these encoded lengths. */
export function bindGroupBytes(model, lengths) {
  return stageBytes(model, lengths.vertex) + stageBytes(model, lengths.fragment) + stageBytes(model, lengths.compute);
}

/** Per-device counters. All byte counts are modeled, not measured. */
export class Ledger {
  constructor(model) {
    this.model = model;
    this.bindGroupsCreated = 0; // valid bind groups (invalid ones allocate nothing)
    this.bindGroupsInvalid = 0;
    this.bindGroupWrappersCollected = 0; // wrapper finalized by the JS GC
    this.bindGroupsCollected = 0; // native memory released (wrapper collected, no work holds it)
    this.modeledNativeBytes = 0;
    this.modeledNativeBytesPeak = 0;
    this.buffersCreated = 0;
    this.buffersDestroyed = 0;
    this.buffersCollected = 0;
    this.buffersLiveBytes = 0;
    this.buffersLiveBytesPeak = 0;
    this.bufferContentsJsBytes = 0; // ArrayBuffer bytes the emulation holds for buffer contents
    this.encoderRecords = 0; // (buffer, encoder) records held (model bufferRecordsEncoders)
    this.encoderRecordBytes = 0;
    this.submits = 0;
    this.commandBuffersInFlight = 0;
    this.bindGroupRefsHeldByWork = 0;
    this.errorsGenerated = 0; // GPUErrors generated (captured by a scope or not)
    this.outOfMemoryErrors = 0; // createBuffer refused at the memory budget (atMemoryBudget 'out-of-memory')
    this.commandBuffersRejected = 0; // submitted command buffers the queue refused (validation)
    this.dispatchesDropped = 0; // dispatch calls in those: work that never ran
    this.immediatesSet = 0; // setImmediates calls that passed validation (modeled: nothing reads them)
  }

  bindGroupAllocated(bytes) {
    this.bindGroupsCreated++;
    this.modeledNativeBytes += bytes;
    if (this.modeledNativeBytes > this.modeledNativeBytesPeak) this.modeledNativeBytesPeak = this.modeledNativeBytes;
  }

  bindGroupReleased(bytes) {
    this.bindGroupsCollected++;
    this.modeledNativeBytes -= bytes;
  }

  bufferAllocated(bytes) {
    this.buffersCreated++;
    this.buffersLiveBytes += bytes;
    if (this.buffersLiveBytes > this.buffersLiveBytesPeak) this.buffersLiveBytesPeak = this.buffersLiveBytes;
  }

  bufferReleased(bytes, how) {
    if (how === 'destroyed') this.buffersDestroyed++;
    else this.buffersCollected++;
    this.buffersLiveBytes -= bytes;
  }

  encoderRecordsAdded(n) {
    this.encoderRecords += n;
    this.encoderRecordBytes += n * this.model.encoderRecordBytes;
  }

  /** Modeled native bytes of buffers: live buffer sizes plus encoder records (when modeled). */
  get modeledBufferBytes() {
    return this.buffersLiveBytes + this.encoderRecordBytes;
  }

  snapshot() {
    return {
      bindGroupsCreated: this.bindGroupsCreated,
      bindGroupsInvalid: this.bindGroupsInvalid,
      bindGroupWrappersCollected: this.bindGroupWrappersCollected,
      bindGroupsCollected: this.bindGroupsCollected,
      bindGroupsLive: this.bindGroupsCreated - this.bindGroupsCollected,
      bindGroupRefsHeldByWork: this.bindGroupRefsHeldByWork,
      modeledNativeBytes: this.modeledNativeBytes,
      modeledNativeBytesPeak: this.modeledNativeBytesPeak,
      buffersCreated: this.buffersCreated,
      buffersDestroyed: this.buffersDestroyed,
      buffersCollected: this.buffersCollected,
      buffersLive: this.buffersCreated - this.buffersDestroyed - this.buffersCollected,
      buffersLiveBytes: this.buffersLiveBytes,
      buffersLiveBytesPeak: this.buffersLiveBytesPeak,
      bufferContentsJsBytes: this.bufferContentsJsBytes,
      encoderRecords: this.encoderRecords,
      encoderRecordBytes: this.encoderRecordBytes,
      modeledBufferBytes: this.modeledBufferBytes,
      submits: this.submits,
      commandBuffersInFlight: this.commandBuffersInFlight,
      errorsGenerated: this.errorsGenerated,
      outOfMemoryErrors: this.outOfMemoryErrors,
      commandBuffersRejected: this.commandBuffersRejected,
      dispatchesDropped: this.dispatchesDropped,
      immediatesSet: this.immediatesSet,
      model: {
        ...this.model,
        argumentBytes: { ...this.model.argumentBytes },
        webkitModels: [...this.model.webkitModels],
        failureModels: [...this.model.failureModels],
        bytesPerComputeOnlyBindGroup: bindGroupBytes(this.model, { vertex: 0, fragment: 0, compute: this.model.argumentBytes.buffer }),
      },
    };
  }
}
