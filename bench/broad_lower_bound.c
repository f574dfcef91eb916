// The broad-phase floor: one LSD radix sort of the x endpoints plus copying
// the answer (see broad_lower_bound.h).
#include "broad_lower_bound.h"

#include <stdlib.h>
#include <string.h>

enum {
    DIGIT_BITS = 11,
    DIGITS = 1 << DIGIT_BITS, // 2048 buckets per pass
    PASSES = 3,               // 11 + 11 + 10 bits = 32
};

struct broad_lower_bound {
    int max_boxes;
    int max_pairs;
    int n;            // boxes of the last run
    uint64_t* keys;   // 2 * max_boxes: the result after a run
    uint64_t* temp;   // 2 * max_boxes: the other ping-pong buffer
    int* pairs;       // 2 * max_pairs
    uint32_t counts[PASSES][DIGITS];
};

// Float bits to a uint32 with the same order: negative floats have all bits
// flipped (larger magnitude, smaller key), non-negative ones the sign bit
// set. -0 sorts just below +0; NaNs sort at the ends.
static uint32_t order_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

broad_lower_bound* broad_lower_bound_create(int max_boxes, int max_pairs)
{
    if (max_boxes <= 0 || max_pairs < 0) {
        return NULL;
    }
    broad_lower_bound* lb = calloc(1, sizeof *lb);
    if (lb == NULL) {
        return NULL;
    }
    lb->max_boxes = max_boxes;
    lb->max_pairs = max_pairs;
    lb->keys = malloc(2 * (size_t)max_boxes * sizeof *lb->keys);
    lb->temp = malloc(2 * (size_t)max_boxes * sizeof *lb->temp);
    lb->pairs = malloc((2 * (size_t)max_pairs + 1) * sizeof *lb->pairs);
    if (lb->keys == NULL || lb->temp == NULL || lb->pairs == NULL) {
        broad_lower_bound_destroy(lb);
        return NULL;
    }
    return lb;
}

uint32_t broad_lower_bound_run(broad_lower_bound* lb, const float* boxes, int n,
                               const int* true_pairs, int pair_count)
{
    if (n <= 0 || n > lb->max_boxes || pair_count < 0 || pair_count > lb->max_pairs) {
        return 0;
    }
    const size_t m = 2 * (size_t)n;
    uint64_t* src = lb->temp;
    uint64_t* dst = lb->keys;

    // Keys with their payloads, and all three digit histograms in one pass.
    memset(lb->counts, 0, sizeof lb->counts);
    for (int i = 0; i < n; i++) {
        const uint32_t lo = order_key(boxes[6 * i]);
        const uint32_t hi = order_key(boxes[6 * i + 3]);
        src[2 * (size_t)i] = (uint64_t)lo << 32 | (uint32_t)(2 * i);
        src[2 * (size_t)i + 1] = (uint64_t)hi << 32 | (uint32_t)(2 * i + 1);
        lb->counts[0][lo & (DIGITS - 1)]++;
        lb->counts[1][(lo >> DIGIT_BITS) & (DIGITS - 1)]++;
        lb->counts[2][lo >> (2 * DIGIT_BITS)]++;
        lb->counts[0][hi & (DIGITS - 1)]++;
        lb->counts[1][(hi >> DIGIT_BITS) & (DIGITS - 1)]++;
        lb->counts[2][hi >> (2 * DIGIT_BITS)]++;
    }

    // Three stable scatter passes, least significant digit first. After an
    // odd number of passes the result is in the buffer first written, so
    // `dst` starts as lb->keys and ends holding the result there.
    for (int pass = 0; pass < PASSES; pass++) {
        uint32_t* count = lb->counts[pass];
        uint32_t sum = 0;
        for (int d = 0; d < DIGITS; d++) {
            const uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        const int shift = 32 + pass * DIGIT_BITS;
        for (size_t i = 0; i < m; i++) {
            const uint64_t v = src[i];
            dst[count[(v >> shift) & (DIGITS - 1)]++] = v;
        }
        uint64_t* t = src;
        src = dst;
        dst = t;
    }
    // PASSES is odd: the last pass wrote lb->keys.
    lb->n = n;

    if (pair_count > 0) {
        memcpy(lb->pairs, true_pairs, 2 * (size_t)pair_count * sizeof *lb->pairs);
    }
    uint32_t check = (uint32_t)lb->keys[0] ^ (uint32_t)lb->keys[m - 1] * 31u;
    if (pair_count > 0) {
        check ^= (uint32_t)lb->pairs[2 * pair_count - 1] * 131u;
    }
    return check;
}

const uint64_t* broad_lower_bound_sorted(const broad_lower_bound* lb)
{
    return lb->keys;
}

const int* broad_lower_bound_pairs(const broad_lower_bound* lb)
{
    return lb->pairs;
}

void broad_lower_bound_destroy(broad_lower_bound* lb)
{
    if (lb != NULL) {
        free(lb->keys);
        free(lb->temp);
        free(lb->pairs);
        free(lb);
    }
}
