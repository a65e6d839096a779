// Shared by workloads: the logits / readback hash every step reports as `logits_hash`.
// Must match harness/native/bench.py fnv1a32_hex (the native baseline compares readbacks with it).

/** 32-bit FNV-1a of the bytes of a typed array (or DataView), as 8 hex digits. */
export function fnv1a32Hex(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
