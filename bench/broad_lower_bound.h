/// A reference floor for the broad-phase benchmark (bench "broad"): not a
/// pair-finding algorithm, but the cost any sort-based broad phase pays at
/// least once per frame, "sort the endpoints once and write the answer":
///
/// - one LSD radix sort (three passes of 11, 11 and 10 bits) of the 2n
///   endpoint keys of the boxes on the x axis, each key the float's bits
///   mapped to an order-preserving uint32 and carrying a 32-bit payload
///   (box id * 2, plus 1 for a maximum);
/// - copying the given true pair list to an output array.
///
/// The bench reports its time as a reference line next to the real
/// implementations. Plain C11 with a C++-friendly header.
#ifndef CAROM_BENCH_BROAD_LOWER_BOUND_H
#define CAROM_BENCH_BROAD_LOWER_BOUND_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Scratch buffers for runs over at most `max_boxes` boxes and `max_pairs`
/// pairs (opaque).
typedef struct broad_lower_bound broad_lower_bound;

/// Allocates every buffer a run needs (two arrays of 2 * max_boxes 64-bit
/// key/payload words for the ping-pong sort, the digit histograms and an
/// output array of 2 * max_pairs ints), so that runs do not allocate.
/// Returns NULL when max_boxes <= 0, max_pairs < 0 or on allocation
/// failure. The caller frees it with broad_lower_bound_destroy.
broad_lower_bound* broad_lower_bound_create(int max_boxes, int max_pairs);

/// One timed run: builds the 2n endpoint keys of `boxes` (6 floats per box:
/// min x y z, max x y z) on the x axis, radix-sorts them, and copies
/// `pair_count` pairs (2 ints each) from `true_pairs` to the output array.
/// Requires 0 < n <= max_boxes and 0 <= pair_count <= max_pairs (checked:
/// returns 0 and does nothing otherwise). Returns a checksum of the result
/// (the payload of the first and last sorted endpoint and the last pair) so
/// that a caller can keep the work from being optimized away; the inputs
/// are only read.
uint32_t broad_lower_bound_run(broad_lower_bound* lb, const float* boxes, int n,
                               const int* true_pairs, int pair_count);

/// The sorted endpoints of the last run, 2n words: key in the high 32 bits,
/// payload (id * 2 + is_max) in the low 32 bits, ascending by key; equal
/// keys keep their input order (minimum of box 0, maximum of box 0, minimum
/// of box 1, ...). Owned by `lb`, valid until the next run.
const uint64_t* broad_lower_bound_sorted(const broad_lower_bound* lb);

/// The pair array written by the last run (2 ints per pair). Owned by `lb`.
const int* broad_lower_bound_pairs(const broad_lower_bound* lb);

/// Frees the buffers. NULL is allowed.
void broad_lower_bound_destroy(broad_lower_bound* lb);

#ifdef __cplusplus
}
#endif

#endif
