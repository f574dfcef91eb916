// The swept-pairs example as a function, so that the carom program's
// `swept` scene runs the same code.
#ifndef CAROM_EXAMPLE_SWEPT_PAIRS_H
#define CAROM_EXAMPLE_SWEPT_PAIRS_H

/// Runs `steps` steps of `count` boxes, the first `fast_count` of them fast,
/// printing each step's swept pairs and what a discrete broad phase misses.
/// Returns 0, or 1 when something fails.
int swept_pairs_run(int count, int fast_count, int steps);

#endif
