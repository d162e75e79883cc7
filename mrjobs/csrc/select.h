/*
 * The selections (select.c): one quickselect and one quicksort over items
 * they know only through an Order (a partition and an insertion sort of
 * their kind: the (score, other) entries of the kernels here, a row's
 * candidates in merge.c), the k best of a group's entries, a whole row in
 * its output order, and the top-k buffer the kernels offer entries to
 * (buffer_offer, inlined in their loops).
 */
#ifndef MRJOBS_SELECT_H
#define MRJOBS_SELECT_H

#include "speedups.h"

/* How quickselect and quicksort move items of one kind */
typedef struct {
    /* [lo, hi] partitioned around a pseudo-random pivot (pivot_in): the
     * items before it in the order first, the others after; its place */
    Py_ssize_t (*partition)(void *items, Py_ssize_t lo, Py_ssize_t hi, uint64_t *seed);
    /* the n items from lo in order, by insertion */
    void (*insertion_sort)(void *items, Py_ssize_t lo, Py_ssize_t n);
} Order;

/* an entry's place in sort_row_best: its score's key, its index */
typedef struct {
    uint64_t key;
    int64_t at;
} Keyed;

HIDDEN_BEGIN
void quickselect(void *items, Py_ssize_t n, Py_ssize_t k, const Order *order, uint64_t *seed);
void quicksort(void *items, Py_ssize_t lo, Py_ssize_t n, const Order *order, uint64_t *seed);
void select_best(double *s, int64_t *o, Py_ssize_t n, Py_ssize_t k, uint64_t *seed);
void sort_row_best(double *s, int64_t *o, Py_ssize_t n, Keyed *scratch, uint64_t *seed);
double rank_value(double *x, int n, int t);
void cut_buffer(double *bs, int64_t *bo, int64_t *h, Py_ssize_t k, Py_ssize_t cap,
                double *floor, uint64_t *seed);
HIDDEN_END

/* A pseudo-random index in [lo, hi] (xorshift64; the quickselect's and the
 * quicksort's pivots) */
static inline Py_ssize_t
pivot_in(Py_ssize_t lo, Py_ssize_t hi, uint64_t *seed)
{
    uint64_t x = *seed;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *seed = x;
    return lo + (Py_ssize_t)(x % (uint64_t)(hi - lo + 1));
}

/* Append an entry to a group's buffer of the best entries seen (h of them,
 * in slots of which there are cap > k); a full buffer is cut (cut_buffer)
 * and *floor raised: entries below it cannot be among the group's k best,
 * and the caller turns them away without a write.  O(1) an entry, amortized
 * (a cut, O(cap), comes once in at least (cap - k) / 8 entries). */
static inline void
buffer_offer(double *bs, int64_t *bo, int64_t *h, Py_ssize_t k, Py_ssize_t cap,
             double *floor, double st, int64_t ot, uint64_t *seed)
{
    bs[*h] = st;
    bo[*h] = ot;
    if (++*h < cap)
        return;
    cut_buffer(bs, bo, h, k, cap, floor, seed);
}

#endif /* MRJOBS_SELECT_H */
