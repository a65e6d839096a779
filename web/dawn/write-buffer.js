// dawn.node's GPUQueue.writeBuffer and views on a SharedArrayBuffer (web/dawn/host.js).
//
// dawn.node (npm `webgpu` 0.6.2) crashes the process (SIGSEGV, measured here on SwiftShader) or
// throws "Invalid argument" (other builds) when writeBuffer is handed data on a
// SharedArrayBuffer — which onnxruntime-web's wasm heap is: its WebGPU EP writes uniforms and
// weights from views of that heap. patchWriteBuffer makes such a call pass a copy of just the
// bytes written; every other call goes through unchanged. The host installs it before the probes,
// so the probes count the call once, with the workload's own arguments.

/** Copy of `data` (ArrayBuffer, TypedArray or DataView on a SharedArrayBuffer) as writeBuffer's
 *  (data, dataOffset, size) → a Uint8Array of just the bytes written (WebGPU spec §19.3: offset
 *  and size count elements of a TypedArray, bytes otherwise). */
export function unsharedCopy(data, dataOffset, size) {
  const typed = ArrayBuffer.isView(data) && !(data instanceof DataView);
  const elem = typed ? data.BYTES_PER_ELEMENT : 1;
  const buffer = ArrayBuffer.isView(data) ? data.buffer : data;
  const viewStart = ArrayBuffer.isView(data) ? data.byteOffset : 0;
  const viewBytes = ArrayBuffer.isView(data) ? data.byteLength : data.byteLength;
  const start = (dataOffset ?? 0) * elem;
  const bytes = size === undefined ? viewBytes - start : size * elem;
  if (start < 0 || bytes < 0 || start + bytes > viewBytes) return null; // let the engine raise its own error
  return new Uint8Array(buffer, viewStart + start, bytes).slice();
}

/** Replace GPUQueue.prototype.writeBuffer (of dawn.node's `globals`) with one that hands Dawn
 *  unsharedCopy(...) when the data is on a SharedArrayBuffer. */
export function patchWriteBuffer(GPUQueue) {
  const original = GPUQueue?.prototype?.writeBuffer;
  if (typeof original !== 'function') return;
  const isShared = (d) => typeof SharedArrayBuffer === 'function'
    && (d instanceof SharedArrayBuffer || (ArrayBuffer.isView(d) && d.buffer instanceof SharedArrayBuffer));
  Object.defineProperty(GPUQueue.prototype, 'writeBuffer', {
    configurable: true, writable: true,
    value: function writeBuffer(buffer, bufferOffset, data, dataOffset, size) {
      if (isShared(data)) {
        const copy = unsharedCopy(data, dataOffset, size);
        if (copy) return original.call(this, buffer, bufferOffset, copy);
      }
      return original.apply(this, arguments);
    },
  });
}

