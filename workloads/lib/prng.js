// A small seeded generator shared by workloads (weights, generated inputs): mulberry32
// (public domain, Tommy Ettinger), 32-bit state, period 2^32. Not for cryptography.

/** A function returning the next uint32 of the sequence seeded by `seed` (a uint32). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}
