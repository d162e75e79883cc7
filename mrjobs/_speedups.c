/*
 * Optional C kernels of mrjobs: the block pair's sparse product and its top-k
 * selection, in both directions (for mrjobs.pairs), and the JSON output's
 * neighbours (for mrjobs.wire).
 *
 * Built as the top-level module ``_mrjobs_speedups`` (like _mrcodecs_speedups)
 * and found by mrjobs._c.  mrjobs uses it when it is importable and falls back
 * to its numpy and Python twins otherwise; both give the same pairs, the same
 * dot products to the bit, the same selections and the same output bytes
 * (tests/pairs/test_pairs.py runs every case on both, tests/pairs/test_pairs_c.py and
 * tests/jobs/test_protocols_c.py compare them).
 *
 * dots() is Gustavson's row-by-row product, as scipy's csr_matmat computes
 * it: a row's products are summed in the order of the row's stored entries,
 * starting from 0.0, one multiply and one add at a time (built without
 * floating-point contraction: no fused multiply-add), so every dot product
 * is the same double scipy gives.  Unlike scipy it keeps pairs whose sum is
 * exactly 0.0 (they share a feature) and, on a diagonal block, visits only
 * the columns above the diagonal.
 *
 * The selections keep each group's k best entries by score descending, ties
 * by the smaller other index -- the order of mrjobs.kernels.top_k_groups --
 * but return them in no set order (the rows step orders each vector's
 * neighbours).  Scores are finite (the scorer drops the others before
 * selection).
 *
 * Arrays come through the buffer protocol: C-contiguous, int64 (q), int32
 * (i) or float64 (d) as each function says, at any address (an array read at
 * an address not aligned to its items is read from an aligned copy, or byte
 * by byte; an output must be aligned: see get_arr).  What the kernels promise of
 * malformed input is a ValueError ("malformed block: ..."), never a read or
 * write out of bounds nor a silently wrong result (tests/pairs/test_pairs_c.py has
 * a test for each):
 *
 *  - every index read is checked against the array it indexes;
 *  - every size computed from the arguments (buffer sizes, offsets, the
 *    slots of the selections' buffers) is checked for overflow;
 *  - every order the kernel relies on is checked: dots() on a diagonal block
 *    stops a feature's walk at the first column below the row, so there each
 *    feature's columns must ascend, and do (mode 0 reads them all, in any
 *    order).
 *
 * A k larger than the entries given is no error: it keeps them all.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* setup.py also passes -ffp-contract=off */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

/* An array argument: its buffer, its items (n) and where they are read (p):
 * the buffer itself, or an aligned copy of it (copy) */
typedef struct {
    Py_buffer view;
    Py_ssize_t n;
    void *p, *copy;
    int held;
} Arr;

static const char *const FORMATS[] = {"q", "i", "d"};
enum { I64 = 0, I32 = 1, F64 = 2 };
/* how get_arr takes an array: read through p (IN), written (OUT), or read
 * only by f64_at's byte copies, at any address (IN_ANY) */
enum { IN = 0, OUT = 1, IN_ANY = 2 };

/* A C-contiguous array of the kind, in a; -1 with ValueError when it is not
 * one.  The kernels index its items as int64_t, int32_t or double, which C
 * allows only at addresses aligned to the item's size; a buffer can be at any
 * address (a numpy view of bytes at an offset: a Stripe decoded from the
 * wire, a row merge_top_k hands back as it is).  So an array read (IN) at
 * another address is copied to an aligned buffer once (the kernels' loops
 * stay plain loads), one written (OUT) is refused: the callers' outputs are
 * numpy's own, aligned. */
static int
get_arr(PyObject *obj, Arr *a, int kind, int use, const char *name)
{
    Py_ssize_t size = kind == I32 ? 4 : 8;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (use == OUT ? PyBUF_WRITABLE : 0);
    a->held = 0;
    a->copy = NULL;
    if (PyObject_GetBuffer(obj, &a->view, flags) < 0)
        return -1;
    a->held = 1;
    const char *f = a->view.format ? a->view.format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@')
        f++;
    /* 'l' is int64 on LP64 platforms, as numpy reports int64 there */
    int ok = a->view.itemsize == size
             && (strcmp(f, FORMATS[kind]) == 0
                 || (kind == I64 && strcmp(f, "l") == 0 && sizeof(long) == 8));
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s: expected a contiguous array of %s", name,
                     kind == I64 ? "int64" : kind == I32 ? "int32" : "float64");
        return -1;
    }
    a->n = a->view.len / size;
    a->p = a->view.buf;
    if (use == IN_ANY || (uintptr_t)a->view.buf % size == 0)
        return 0;
    if (use == OUT) {
        PyErr_Format(PyExc_ValueError, "%s: expected an array aligned to %zd bytes", name,
                     size);
        return -1;
    }
    /* (PyMem_Malloc: aligned for any item; 1 byte at least) */
    if (!(a->copy = PyMem_Malloc(a->view.len ? a->view.len : 1))) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(a->copy, a->view.buf, a->view.len);
    a->p = a->copy;
    return 0;
}

static void
release(Arr *arrs, int n)
{
    for (int i = 0; i < n; i++)
        if (arrs[i].held) {
            PyBuffer_Release(&arrs[i].view);
            PyMem_Free(arrs[i].copy);
            arrs[i].held = 0;
            arrs[i].copy = NULL;
        }
}

/* the items of an array taken IN or OUT (aligned) */
#define I64P(a) ((int64_t *)(a).p)
#define I32P(a) ((int32_t *)(a).p)
#define F64P(a) ((double *)(a).p)

/* item i of a float64 array taken IN_ANY (or of a buffer of doubles at any
 * address): a byte copy, one plain load where unaligned loads are allowed */
static inline double
f64_at(const void *p, Py_ssize_t i)
{
    double v;
    memcpy(&v, (const char *)p + 8 * i, sizeof(v));
    return v;
}

static PyObject *
bad(const char *what)
{
    PyErr_Format(PyExc_ValueError, "malformed block: %s", what);
    return NULL;
}

/* a * b and a + b for sizes a, b >= 0, or -1 when they do not fit in a
 * Py_ssize_t (or an operand is negative) */
static inline Py_ssize_t
size_mul(Py_ssize_t a, Py_ssize_t b)
{
    if (a < 0 || b < 0 || (a && b > PY_SSIZE_T_MAX / a))
        return -1;
    return a * b;
}

static inline Py_ssize_t
size_add(Py_ssize_t a, Py_ssize_t b)
{
    if (a < 0 || b < 0 || b > PY_SSIZE_T_MAX - a)
        return -1;
    return a + b;
}

/* Row r's dot products with the columns of Bt from lo on, as dots() sums
 * them: into acc, each column the row reaches listed once in touched (in the
 * order first reached) and marked with row.  How many columns, or -1 with
 * *why set when an index is out of range or a feature's columns do not
 * ascend (checked once a feature, where sorted is given: modes 1 and 2). */
static inline Py_ssize_t
row_sums(const int64_t *ap, const int32_t *ai, const double *ad, Py_ssize_t n_a,
         const int64_t *bp, const int32_t *bi, const double *bd, Py_ssize_t n_b,
         Py_ssize_t n_f, Py_ssize_t n_c, Py_ssize_t r, int64_t lo, int32_t row,
         unsigned char *sorted, double *acc, int32_t *mark, int32_t *touched,
         const char **why)
{
    int64_t s = ap[r], e = ap[r + 1];
    if (s < 0 || e < s || e > n_a)
        return -1;
    Py_ssize_t m = 0;
    for (int64_t jj = s; jj < e; jj++) {
        int32_t f = ai[jj];
        if (f < 0 || f >= n_f)
            return -1;
        double v = ad[jj];
        int64_t ks = bp[f], ke = bp[f + 1];
        if (ks < 0 || ke < ks || ke > n_b)
            return -1;
        if (sorted && !sorted[f]) {
            for (int64_t kk = ks + 1; kk < ke; kk++)
                if (bi[kk] < bi[kk - 1]) {
                    *why = "a feature's columns (bt_indices) not ascending";
                    return -1;
                }
            sorted[f] = 1;
        }
        /* columns ascending: walk down from the last, stop below lo */
        for (int64_t kk = ke - 1; kk >= ks; kk--) {
            int64_t c = bi[kk];
            if (c < 0 || c >= n_c)
                return -1;
            if (c < lo)
                break;
            if (mark[c] != row) {
                mark[c] = row;
                acc[c] = 0.0;
                touched[m++] = (int32_t)c;
            }
            acc[c] += v * bd[kk];
        }
    }
    return m;
}

/*
 * dots(a_indptr q, a_indices i, a_data d, bt_indptr q, bt_indices i, bt_data d,
 *      n_c, r0, r1, mode, out_r q, out_c q, out_d d) -> int
 *
 * The products of rows r0..r1-1 of A with the columns of Bt (features x
 * columns, each feature's columns ascending): pairs that share a feature,
 * row by row, written to out_r, out_c (row and column indices) and out_d;
 * returns how many, or -1 when they do not fit in the outputs.  mode 0: every
 * column; 1: columns above the row (c > r: a diagonal block); 2: c >= r.
 * Modes 1 and 2 check, once a call for each feature a row meets, that the
 * feature's columns ascend (they stop its walk at the first column below
 * the row: unsorted columns would drop pairs silently).
 */
static PyObject *
dots(PyObject *self, PyObject *args)
{
    PyObject *o[9];
    Py_ssize_t n_c, r0, r1;
    int mode;
    if (!PyArg_ParseTuple(args, "OOOOOOnnniOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &n_c, &r0, &r1, &mode, &o[6], &o[7], &o[8]))
        return NULL;
    Arr a[9];
    memset(a, 0, sizeof(a));
    static const int kinds[9] = {I64, I32, F64, I64, I32, F64, I64, I64, F64};
    static const char *const names[9] = {"a_indptr", "a_indices", "a_data", "bt_indptr",
                                         "bt_indices", "bt_data", "out_r", "out_c", "out_d"};
    for (int i = 0; i < 9; i++)
        if (get_arr(o[i], &a[i], kinds[i], i >= 6 ? OUT : IN, names[i]) < 0) {
            release(a, 9);
            return NULL;
        }
    PyObject *result = NULL;
    const int64_t *ap = I64P(a[0]), *bp = I64P(a[3]);
    const int32_t *ai = I32P(a[1]), *bi = I32P(a[4]);
    const double *ad = F64P(a[2]), *bd = F64P(a[5]);
    int64_t *out_r = I64P(a[6]), *out_c = I64P(a[7]);
    double *out_d = F64P(a[8]);
    Py_ssize_t cap = a[6].n < a[7].n ? a[6].n : a[7].n;
    if (a[8].n < cap)
        cap = a[8].n;
    Py_ssize_t n_f = a[3].n - 1;
    if (r0 < 0 || r1 < r0 || r1 >= a[0].n || n_c < 0 || n_f < 0 || mode < 0 || mode > 2
        || a[1].n != a[2].n || a[4].n != a[5].n) {
        release(a, 9);
        return bad("shapes");
    }
    /* a row's sums (acc), the columns it touched (in order), and the last
     * row (counted from r0) that touched each column; in modes 1 and 2, the
     * features whose columns were found ascending */
    double *acc = NULL;
    int32_t *mark = NULL, *touched = NULL;
    unsigned char *sorted = NULL;
    if (r1 - r0 >= INT32_MAX || n_c >= INT32_MAX
        || size_mul(n_c, (Py_ssize_t)sizeof(double)) < 0) {
        release(a, 9);
        return bad("a chunk or block too large");
    }
    if (n_c) {
        acc = malloc(n_c * sizeof(double));
        mark = malloc(n_c * sizeof(int32_t));
        touched = malloc(n_c * sizeof(int32_t));
        if (!acc || !mark || !touched) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t c = 0; c < n_c; c++)
            mark[c] = -1;
    }
    if (mode && n_f) {
        /* calloc: the pages of features no row meets are never touched */
        sorted = calloc(n_f, 1);
        if (!sorted) {
            PyErr_NoMemory();
            goto done;
        }
    }
    Py_ssize_t n = 0;
    int fits = 1, ok = 1;
    const char *why = "an index out of range";
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = r0; r < r1 && ok && fits; r++) {
        int64_t lo = mode == 0 ? 0 : (mode == 1 ? r + 1 : r);
        Py_ssize_t m = row_sums(ap, ai, ad, a[1].n, bp, bi, bd, a[4].n, n_f, n_c, r, lo,
                                (int32_t)(r - r0), sorted, acc, mark, touched, &why);
        if (m < 0) {
            ok = 0;
            break;
        }
        if (n + m > cap) {
            fits = 0;
            break;
        }
        for (Py_ssize_t t = 0; t < m; t++) {
            int64_t c = touched[t];
            out_r[n] = r;
            out_c[n] = c;
            out_d[n] = acc[c];
            n++;
        }
    }
    Py_END_ALLOW_THREADS
    if (!ok)
        bad(why);
    else
        result = PyLong_FromSsize_t(fits ? n : -1);
done:
    free(acc);
    free(mark);
    free(touched);
    free(sorted);
    release(a, 9);
    return result;
}

/* entry x is better than entry y: a higher score, or the same score and a
 * smaller other index (others are distinct within a group: a strict order) */
static inline int
better(double sx, int64_t ox, double sy, int64_t oy)
{
    return sx > sy || (sx == sy && ox < oy);
}

static inline void
swap(double *s, int64_t *o, Py_ssize_t i, Py_ssize_t j)
{
    double ts = s[i];
    int64_t to = o[i];
    s[i] = s[j];
    o[i] = o[j];
    s[j] = ts;
    o[j] = to;
}

/* A pseudo-random index in [lo, hi] (xorshift64; the quickselects' pivots) */
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

/* Partition [lo, hi] around a pseudo-random pivot: the entries better than
 * it before it, the others after; its place */
static inline Py_ssize_t
partition_best(double *s, int64_t *o, Py_ssize_t lo, Py_ssize_t hi, uint64_t *seed)
{
    swap(s, o, pivot_in(lo, hi, seed), hi);
    double ps = s[hi];
    int64_t po = o[hi];
    Py_ssize_t store = lo;
    for (Py_ssize_t i = lo; i < hi; i++) {
        /* branch-free: [lo, store) better than the pivot, [store, i) not;
         * entry i swapped with the first that is not, which it joins
         * unless it is better (a branch an entry missed half the time) */
        double xs = s[i];
        int64_t xo = o[i];
        swap(s, o, i, store);
        store += (xs > ps) | ((xs == ps) & (xo < po));
    }
    swap(s, o, store, hi);
    return store;
}

/* Move the k best of n entries to the front (in no set order): quickselect
 * with a pseudo-random pivot, expected O(n).  Which entries are the k best
 * does not depend on the pivots (the order is strict). */
static void
select_best(double *s, int64_t *o, Py_ssize_t n, Py_ssize_t k, uint64_t *seed)
{
    if (k >= n)
        return;
    Py_ssize_t lo = 0, hi = n - 1, t = k - 1;
    while (hi > lo) {
        Py_ssize_t store = partition_best(s, o, lo, hi, seed);
        if (store == t)
            return;
        if (store < t)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/* n entries in order, best first (better()'s): quicksort with select_best's
 * partition (the smaller side recursed: O(log n) deep), insertion sort below
 * 16 */
static void
sort_best(double *s, int64_t *o, Py_ssize_t n, uint64_t *seed)
{
    while (n > 16) {
        Py_ssize_t hi = n - 1, store = partition_best(s, o, 0, hi, seed);
        if (store < hi - store) {
            sort_best(s, o, store, seed);
            s += store + 1;
            o += store + 1;
            n -= store + 1;
        }
        else {
            sort_best(s + store + 1, o + store + 1, hi - store, seed);
            n = store;
        }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        double xs = s[i];
        int64_t xo = o[i];
        Py_ssize_t j = i;
        for (; j > 0 && better(xs, xo, s[j - 1], o[j - 1]); j--) {
            s[j] = s[j - 1];
            o[j] = o[j - 1];
        }
        s[j] = xs;
        o[j] = xo;
    }
}

/* an entry's place in sort_row_best: its score's key, its index */
typedef struct {
    uint64_t key;
    int64_t at;
} Keyed;

/* Ascending keys for descending scores, no NaN among them: the bits of a
 * double ordered as unsigned, then flipped; -0.0 as 0.0 (one score to
 * better()) */
static inline uint64_t
descending_key(double s)
{
    uint64_t u;
    if (s == 0.0)
        s = 0.0;
    memcpy(&u, &s, sizeof(u));
    u = (u >> 63) ? ~u : u | (1ULL << 63);
    return ~u;
}

#define RADIX_MIN 128

/* A whole row's n entries in order for its output, best first (better()'s
 * order), with room for 3 * n Keyed in scratch: from RADIX_MIN entries on a
 * stable LSD radix sort of the scores' keys, a byte a pass, the bytes every
 * entry shares passed over (a row's best scores share their leading bytes),
 * then each run of one score by other; fewer, sort_best.  (sort_best's
 * compares were 8% of a dense --top-k 1000 run's time.) */
static void
sort_row_best(double *s, int64_t *o, Py_ssize_t n, Keyed *scratch, uint64_t *seed)
{
    if (n < RADIX_MIN) {
        sort_best(s, o, n, seed);
        return;
    }
    Keyed *x = scratch, *y = scratch + n;
    uint32_t count[8][256];
    memset(count, 0, sizeof(count));
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = descending_key(s[i]);
        x[i].key = key;
        x[i].at = i;
        for (int d = 0; d < 8; d++)
            count[d][(key >> (8 * d)) & 255]++;
    }
    for (int d = 0; d < 8 && n; d++) {
        if (count[d][(x[0].key >> (8 * d)) & 255] == (uint32_t)n)
            continue;  /* a byte every entry shares */
        Py_ssize_t at[256], sum = 0;
        for (int b = 0; b < 256; b++) {
            at[b] = sum;
            sum += count[d][b];
        }
        for (Py_ssize_t i = 0; i < n; i++)
            y[at[(x[i].key >> (8 * d)) & 255]++] = x[i];
        Keyed *t = x;
        x = y;
        y = t;
    }
    /* the scores and others in key order (in the third n of scratch), each
     * run of one score by other */
    double *ts = (double *)(scratch + 2 * n);
    int64_t *to = (int64_t *)(ts + n);
    for (Py_ssize_t i = 0; i < n; i++) {
        ts[i] = s[x[i].at];
        to[i] = o[x[i].at];
    }
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        while (j < n && x[j].key == x[i].key)
            j++;
        if (j - i > 1)  /* one score: better() orders them by other */
            sort_best(ts + i, to + i, j - i, seed);
        i = j;
    }
    memcpy(s, ts, n * sizeof(double));
    memcpy(o, to, n * sizeof(int64_t));
}

#define SEED 0x9E3779B97F4A7C15ULL

#define CUT_SAMPLE 64

#define RANK_SMALL 32

/* The value at rank t (0: the highest) of the n scores x: up to RANK_SMALL
 * of them counted, more reordered by a quickselect (Hoare's partition around
 * the middle entry); the same value as sorting them would give (the sample's
 * sort was most of a cut at --top-k 100) */
static double
rank_value(double *x, int n, int t)
{
    if (n <= RANK_SMALL) {
        /* few -- the buffers of a small k: each value's rank counted, the
         * compares without a branch (a quickselect's mispredicted branches
         * were a sixth of pair_topk's time at --top-k 10, cuts of 18 slots;
         * a larger k's sample of 64 took as long either way); the value with
         * t above it, or where ties leave none, the one whose ties span rank
         * t */
        for (int i = 0; i < n; i++) {
            int above = 0;
            for (int j = 0; j < n; j++)
                above += x[j] > x[i];
            if (above == t)
                return x[i];
        }
        for (int i = 0; i < n; i++) {
            int above = 0, at_least = 0;
            for (int j = 0; j < n; j++) {
                above += x[j] > x[i];
                at_least += x[j] >= x[i];
            }
            if (above <= t && t < at_least)
                return x[i];
        }
    }
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double p = x[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (x[i] > p)
                i++;
            while (x[j] < p)
                j--;
            if (i <= j) {
                double tmp = x[i];
                x[i++] = x[j];
                x[j--] = tmp;
            }
        }
        if (t <= j)
            hi = j;
        else if (t >= i)
            lo = i;
        else
            break;
    }
    return x[t];
}

/* A full buffer (cap > k entries) cut, in one pass where it can: p is the
 * k-th best score (a buffer of fewer than 2 * CUT_SAMPLE slots) or, in a
 * larger one, the score of an evenly spaced sample of the buffer at the rank
 * where about k + (cap - k) / 3 entries score at least as high; when at
 * least k entries are not below p, and at most cap - (cap - k) / 8 - 1 (room
 * is made), they are kept (moved to the front in their order, no branch an
 * entry) and *floor set to p.  Otherwise (ties, a sample that missed) the
 * exact cut to the k best, *floor the worst of them.  Either way every entry
 * that can be among the group's k best is kept (at least k entries are not
 * below *floor), so the group's k best in the end are the same entries; the
 * exact cut alone cost ~10 branches an entry kept, most of pair_topk's time
 * at --top-k 1000, and at --top-k 10 a fifth of it. */
static void
cut_buffer(double *bs, int64_t *bo, int64_t *h, Py_ssize_t k, Py_ssize_t cap,
           double *floor, uint64_t *seed)
{
    double smp[2 * CUT_SAMPLE], p;
    if (cap >= 2 * CUT_SAMPLE) {
        Py_ssize_t stride = cap / CUT_SAMPLE;
        for (int i = 0; i < CUT_SAMPLE; i++)
            smp[i] = bs[i * stride];
        Py_ssize_t want = k + (cap - k) / 3;
        Py_ssize_t rank = want * CUT_SAMPLE / cap;
        p = rank_value(smp, CUT_SAMPLE, rank < CUT_SAMPLE ? (int)rank : CUT_SAMPLE - 1);
    }
    else {
        memcpy(smp, bs, cap * sizeof(double));
        p = rank_value(smp, (int)cap, (int)k - 1);
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < cap; i++)
        kept += !(bs[i] < p);
    if (kept >= k && kept <= cap - (cap - k) / 8 - 1) {
        Py_ssize_t j = 0;
        for (Py_ssize_t i = 0; i < cap; i++) {
            double v = bs[i];
            int64_t o = bo[i];
            bs[j] = v;
            bo[j] = o;
            j += !(v < p);
        }
        *h = j;
        *floor = p;
        return;
    }
    select_best(bs, bo, cap, k, seed);
    *h = k;
    double w = bs[0];
    for (Py_ssize_t i = 1; i < k; i++)
        if (bs[i] < w)
            w = bs[i];
    *floor = w;
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

/*
 * top_k_rows(groups q, others q, scores d, k, out_g q, out_o q, out_s d) -> int
 *
 * Entries grouped by group (each group's entries contiguous): each group's k
 * best (in no set order), groups in the order they come; returns how many
 * were written.  The outputs hold at least as many entries as the input.  A
 * k of at least the number of entries keeps them all.
 */
static PyObject *
top_k_rows(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOnOOO", &o[0], &o[1], &o[2], &k, &o[3], &o[4], &o[5]))
        return NULL;
    Arr a[6];
    memset(a, 0, sizeof(a));
    static const int kinds[6] = {I64, I64, F64, I64, I64, F64};
    static const char *const names[6] = {"groups", "others", "scores", "out_g", "out_o",
                                         "out_s"};
    for (int i = 0; i < 6; i++)
        if (get_arr(o[i], &a[i], kinds[i], i >= 3 ? OUT : IN, names[i]) < 0) {
            release(a, 6);
            return NULL;
        }
    Py_ssize_t n = a[0].n;
    if (k < 1 || a[1].n != n || a[2].n != n || a[3].n < n || a[4].n < n || a[5].n < n) {
        release(a, 6);
        return bad("top_k_rows: shapes");
    }
    /* no group holds more than n entries: a larger k keeps them all, as n
     * does, and the buffer's slots (k and half as many again) stay small */
    if (k > n)
        k = n ? n : 1;
    Py_ssize_t cap = size_add(k, k > 16 ? k / 2 : 8);
    if (cap < 0) {
        release(a, 6);
        return bad("top_k_rows: k too large");
    }
    const int64_t *g = I64P(a[0]), *ot = I64P(a[1]);
    const double *sc = F64P(a[2]);
    int64_t *og = I64P(a[3]), *oo = I64P(a[4]);
    double *os = F64P(a[5]);
    Py_ssize_t m = 0;
    uint64_t seed = SEED;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t s = 0;
    while (s < n) {
        /* the group's buffer is the output at its place there: a group of
         * e - s entries never holds more than that many */
        Py_ssize_t e = s;
        int64_t h = 0;
        double floor = -HUGE_VAL;
        for (; e < n && g[e] == g[s]; e++)
            if (!(sc[e] < floor))
                buffer_offer(os + m, oo + m, &h, k, cap, &floor, sc[e], ot[e], &seed);
        select_best(os + m, oo + m, h, k, &seed);
        if (h > k)
            h = k;
        for (int64_t t = 0; t < h; t++)
            og[m + t] = g[s];
        m += h;
        s = e;
    }
    Py_END_ALLOW_THREADS
    release(a, 6);
    return PyLong_FromSsize_t(m);
}

/* An entry of a vector's row in the rows step: its score and its id's 16
 * bytes (in the pieces' buffers) */
typedef struct {
    double s;
    const unsigned char *id;
} Cand;

/* x before y: a higher score, or the same and a smaller id (bytes) */
static inline int
cand_before(const Cand *x, const Cand *y)
{
    return x->s > y->s || (x->s == y->s && memcmp(x->id, y->id, 16) < 0);
}

/* partition c[lo..hi] around a pseudo-random pivot: its place */
static Py_ssize_t
cand_partition(Cand *c, Py_ssize_t lo, Py_ssize_t hi, uint64_t *seed)
{
    Py_ssize_t p = pivot_in(lo, hi, seed);
    Cand pv = c[p];
    c[p] = c[hi];
    c[hi] = pv;
    Py_ssize_t store = lo;
    for (Py_ssize_t i = lo; i < hi; i++)
        if (cand_before(&c[i], &pv)) {
            Cand tmp = c[i];
            c[i] = c[store];
            c[store++] = tmp;
        }
    c[hi] = c[store];
    c[store] = pv;
    return store;
}

/* c[0..n) in cand_before's order: quicksort (the smaller side recursed, so
 * the depth stays O(log n)), insertion sort below 16 */
static void
cand_sort(Cand *c, Py_ssize_t n, uint64_t *seed)
{
    while (n > 16) {
        Py_ssize_t p = cand_partition(c, 0, n - 1, seed);
        if (p < n - 1 - p) {
            cand_sort(c, p, seed);
            c += p + 1;
            n -= p + 1;
        }
        else {
            cand_sort(c + p + 1, n - 1 - p, seed);
            n = p;
        }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        Cand v = c[i];
        Py_ssize_t j = i;
        for (; j > 0 && cand_before(&v, &c[j - 1]); j--)
            c[j] = c[j - 1];
        c[j] = v;
    }
}

/* the k first of n in cand_before's order moved to the front (quickselect) */
static void
cand_select(Cand *c, Py_ssize_t n, Py_ssize_t k, uint64_t *seed)
{
    Py_ssize_t lo = 0, hi = n - 1, t = k - 1;
    while (k < n && hi > lo) {
        Py_ssize_t store = cand_partition(c, lo, hi, seed);
        if (store == t)
            return;
        if (store < t)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/*
 * merge_top_k(ids list, scores list, k) -> (ids bytes, scores bytes) or None
 *
 * A vector's row from its pieces (piece i: ids[i], 16 bytes an entry, and
 * scores[i], float64): its k best entries, score descending, ties by id
 * (bytes) ascending -- the row
 * mrjobs.scoring.merge_rows makes, found in O(entries + k log k) without
 * gathering the pieces in numpy first (entries already in that order:
 * O(entries); one such piece of at most k entries comes back itself, the
 * two objects given, not bytes).  None when a score is NaN (the caller
 * orders those its own way).
 */
static PyObject *
merge_top_k(PyObject *self, PyObject *args)
{
    PyObject *ids_l, *sc_l;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "O!O!n", &PyList_Type, &ids_l, &PyList_Type, &sc_l, &k))
        return NULL;
    Py_ssize_t np_ = PyList_GET_SIZE(ids_l);
    if (k < 1 || PyList_GET_SIZE(sc_l) != np_)
        return bad("merge_top_k: shapes");
    Py_buffer *views = PyMem_Calloc(2 * (np_ ? np_ : 1), sizeof(Py_buffer));
    if (!views)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    Cand *c = NULL;
    Py_ssize_t got = 0, n = 0;
    for (; got < np_; got++) {
        Py_buffer *vi = &views[2 * got], *vs = &views[2 * got + 1];
        if (PyObject_GetBuffer(PyList_GET_ITEM(ids_l, got), vi, PyBUF_SIMPLE) < 0)
            goto done;
        if (PyObject_GetBuffer(PyList_GET_ITEM(sc_l, got), vs, PyBUF_SIMPLE) < 0) {
            PyBuffer_Release(vi);
            goto done;
        }
        if (vi->len % 16 || vs->len % 8 || vi->len / 16 != vs->len / 8) {
            got++;
            bad("merge_top_k: a piece's ids and scores differ in length");
            goto done;
        }
        n += vs->len / 8;
    }
    c = PyMem_Malloc((n ? n : 1) * sizeof(Cand));
    if (!c) {
        PyErr_NoMemory();
        goto done;
    }
    int nan = 0;
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < np_; i++) {
        /* (the pieces' bytes at any address: their scores read by f64_at) */
        const unsigned char *id = views[2 * i].buf;
        for (Py_ssize_t j = 0, len = views[2 * i + 1].len / 8; j < len; j++, m++) {
            double v = f64_at(views[2 * i + 1].buf, j);
            nan |= v != v;
            c[m].s = v;
            c[m].id = id + 16 * j;
        }
    }
    if (nan) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t kept = k < n ? k : n;
    uint64_t seed = SEED;
    /* entries already in order (a whole row from pair_topk's mode 3, one
     * piece): the first k, as they are */
    int ordered = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 1; i < n && ordered; i++)
        ordered = cand_before(&c[i - 1], &c[i]);
    if (!ordered) {
        cand_select(c, n, kept, &seed);
        cand_sort(c, kept, &seed);
    }
    Py_END_ALLOW_THREADS
    if (ordered && np_ == 1 && kept == n) {  /* the piece itself is the row: not copied */
        result = PyTuple_Pack(2, PyList_GET_ITEM(ids_l, 0), PyList_GET_ITEM(sc_l, 0));
        goto done;
    }
    PyObject *ids = PyBytes_FromStringAndSize(NULL, 16 * kept);
    PyObject *scores = ids ? PyBytes_FromStringAndSize(NULL, 8 * kept) : NULL;
    if (scores) {
        char *pi = PyBytes_AS_STRING(ids), *ps = PyBytes_AS_STRING(scores);
        for (Py_ssize_t i = 0; i < kept; i++) {
            memcpy(pi + 16 * i, c[i].id, 16);
            memcpy(ps + 8 * i, &c[i].s, 8);
        }
        result = PyTuple_Pack(2, ids, scores);
    }
    Py_XDECREF(ids);
    Py_XDECREF(scores);
done:
    for (Py_ssize_t i = 0; i < got; i++) {
        PyBuffer_Release(&views[2 * i]);
        PyBuffer_Release(&views[2 * i + 1]);
    }
    PyMem_Free(views);
    PyMem_Free(c);
    return result;
}

/*
 * kept_offer(groups q, others q, scores d, skip_self, k, ks d, ko q, kn q, floor d)
 *
 * Each group's best k entries so far, in a buffer of cap > k slots a group
 * (len(ks) = len(kn) * cap): group g's entries are ks[g*cap : g*cap + kn[g]]
 * (scores) and ko[...] (others).  Each entry is offered to its group's buffer
 * (buffer_offer) unless it is below the group's floor.  With skip_self,
 * entries whose group equals their other are left out.  O(1) an entry,
 * amortized, where a heap would cost O(log k), each level a cache miss when
 * k is large.
 */
static PyObject *
kept_offer(PyObject *self, PyObject *args)
{
    PyObject *o[7];
    int skip_self;
    Py_ssize_t k, cap;
    if (!PyArg_ParseTuple(args, "OOOpnnOOOO", &o[0], &o[1], &o[2], &skip_self, &k, &cap,
                          &o[3], &o[4], &o[5], &o[6]))
        return NULL;
    Arr a[7];
    memset(a, 0, sizeof(a));
    static const int kinds[7] = {I64, I64, F64, F64, I64, I64, F64};
    static const char *const names[7] = {"groups", "others", "scores", "ks", "ko", "kn",
                                         "floor"};
    for (int i = 0; i < 7; i++)
        if (get_arr(o[i], &a[i], kinds[i], i >= 3 ? OUT : IN, names[i]) < 0) {
            release(a, 7);
            return NULL;
        }
    Py_ssize_t n = a[0].n, n_g = a[5].n;
    if (k < 1 || cap <= k) {
        release(a, 7);
        return bad("kept_offer: shapes");
    }
    /* every group's slots: a product that wraps around could match the
     * buffers' length and send a group's offset past their end */
    Py_ssize_t slots = size_mul(n_g, cap);
    if (slots < 0) {
        release(a, 7);
        return bad("kept_offer: len(kn) * cap slots overflow");
    }
    if (a[1].n != n || a[2].n != n || a[3].n != slots || a[4].n != slots || a[6].n != n_g) {
        release(a, 7);
        return bad("kept_offer: shapes");
    }
    const int64_t *g = I64P(a[0]), *ot = I64P(a[1]);
    const double *sc = F64P(a[2]);
    double *ks = F64P(a[3]), *floor = F64P(a[6]);
    int64_t *ko = I64P(a[4]), *kn = I64P(a[5]);
    int ok = 1;
    uint64_t seed = SEED;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < n; t++) {
        int64_t c = g[t];
        if (c < 0 || c >= n_g) {
            ok = 0;
            break;
        }
        double st = sc[t];
        if (st < floor[c] || (skip_self && c == ot[t]))
            continue;
        int64_t h = kn[c];
        if (h < 0 || h >= cap) {
            ok = 0;
            break;
        }
        buffer_offer(ks + c * cap, ko + c * cap, kn + c, k, cap, floor + c, st, ot[t],
                     &seed);
    }
    Py_END_ALLOW_THREADS
    release(a, 7);
    if (!ok)
        return bad("kept_offer: a group out of range");
    Py_RETURN_NONE;
}

/*
 * kept_take(k, ks d, ko q, kn q, out_g q, out_o q, out_s d) -> int
 *
 * Every group's k best (in no set order), groups ascending; returns how many
 * (the outputs hold at least sum(min(kn, k))).  The buffers are emptied (kn
 * set to 0).
 */
static PyObject *
kept_take(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "nOOOOOO", &k, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Arr a[6];
    memset(a, 0, sizeof(a));
    static const int kinds[6] = {F64, I64, I64, I64, I64, F64};
    static const char *const names[6] = {"ks", "ko", "kn", "out_g", "out_o", "out_s"};
    for (int i = 0; i < 6; i++)
        if (get_arr(o[i], &a[i], kinds[i], OUT, names[i]) < 0) {
            release(a, 6);
            return NULL;
        }
    Py_ssize_t n_g = a[2].n;
    double *ks = F64P(a[0]), *os = F64P(a[5]);
    int64_t *ko = I64P(a[1]), *kn = I64P(a[2]), *og = I64P(a[3]), *oo = I64P(a[4]);
    Py_ssize_t total = 0, cap = n_g ? a[0].n / n_g : 0;
    int ok = k >= 1 && a[0].n == n_g * cap && a[1].n == n_g * cap;
    for (Py_ssize_t c = 0; ok && c < n_g; c++) {
        ok = kn[c] >= 0 && kn[c] <= cap;
        total += kn[c] < k ? kn[c] : k;
    }
    if (!ok || a[3].n < total || a[4].n < total || a[5].n < total) {
        release(a, 6);
        return bad("kept_take: shapes");
    }
    Py_ssize_t m = 0;
    uint64_t seed = SEED;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < n_g; c++) {
        int64_t h = kn[c];
        select_best(ks + c * cap, ko + c * cap, h, k, &seed);
        if (h > k)
            h = k;
        for (int64_t t = 0; t < h; t++) {
            og[m] = c;
            oo[m] = ko[c * cap + t];
            os[m] = ks[c * cap + t];
            m++;
        }
        kn[c] = 0;
    }
    Py_END_ALLOW_THREADS
    release(a, 6);
    return PyLong_FromSsize_t(m);
}

/*
 * pair_topk(a_indptr q, a_indices i, a_data d, bt_indptr q, bt_indices i, bt_data d,
 *           n_c, r0, r1, mode, k, kind, threshold, limit,
 *           mirror, k_c, cap, ks d, ko q, kn q, floor d, merge, counts q
 *           [, zero_free, seeds d])
 *     -> (groups bytes, others bytes, scores bytes)
 *
 * dots(), scored and selected in one pass, with no pair written out: each
 * row's products are summed as dots() sums them (the same doubles), then
 * each is scored, checked and offered to the row's best and, with mirror,
 * to its column's kept buffer (as kept_offer keeps it: k_c best in cap
 * slots a column).  Each row's k best (in no set order), rows ascending, as
 * int64 groups and others and float64 scores (bytes; the outputs grow as the
 * rows fill them: a row writes at most min(k, its candidates)).
 *
 * kind 0: the score is the dot product (measure "dot"); 1: the cosine of unit
 * weights (mrjobs.measures.scores.cosine: a sum beyond UNIT_LIMIT, or NaN, is
 * an error, as in Measure.score; then clamped to [-1, 1] and snapped to +-1
 * within UNIT_SNAP).  A score is kept when finite (limit == inf) or when
 * |score| <= limit (float32 on the wire), and when >= threshold (-inf: no
 * threshold).  counts[0..2] get the pairs scored, not finite and below the
 * threshold (the Scorer's counters); counts[3] the products.
 *
 * merge (a diagonal block, mode 1 or 2, with mirror): row r's result also
 * holds its column buffer's entries -- the rows above it, which came before
 * it -- so that each vector's best over the whole block comes in one result;
 * the buffer is emptied.
 *
 * mode (as dots() takes it): 0 every column, 1 the columns after the row's
 * own (a diagonal block's upper triangle), 2 from the row's own on; 3 (one
 * block, without mirror) every column but the row's own: whole rows, each
 * pair scored from both of its rows, so that rows can be run apart (on
 * threads) with no column buffer; each row's best come in their output
 * order (score descending, ties by smaller other), sorted on the caller's
 * thread.
 *
 * zero_free (default 0): 1 where the caller found that no pair that shares a
 * feature can sum to exactly 0.0 (mrjobs.pairs.fused._zero_free: each side's
 * weights finite and of one sign, the product of their least magnitudes not
 * 0.0).  Then a column is hit exactly where its sum is not 0.0, and the dense
 * sums keep no hit bytes (their writes and the heavy rows' or_bytes were a
 * tenth of a dense --top-k 100 run's time); the same results either way.
 * (Finite: a heavy row adds v * 0.0 to the columns it misses, NaN for an
 * infinite v.)
 *
 * seeds (default None; modes 1 and 2 with mirror, not merged, a diagonal
 * block): n_c doubles shared by the calls that run a block's chunks on
 * threads, -inf at first.  The rows are taken last to first; each row's k-th
 * best is left in seeds[r] (where it has k), and a column's floor is raised
 * to its seed before an offer to it (raise_to_seed): the same rows and
 * counts, fewer column offers.
 */
#define UNIT_LIMIT (1.0 + 0x1p-20)
#define UNIT_SNAP 0x1p-44

/* A row's sums for pair_topk: the same doubles as row_sums gives (each
 * column's products added in the order of the row's entries, from 0.0),
 * found faster.
 *
 * Each feature's columns are checked once a call (checked[f]: 1 in range and
 * ascending, 2 in range only, which mode 0 allows), so that the walks need
 * no check, and a walk starts at the feature's first column >= lo (a binary
 * search).  A row whose walks are long against the columns it may reach
 * (est >= (n_c - lo) / DENSE_SPAN) is summed densely, DENSE_CHUNK columns at
 * a time (its sums and marks of a chunk stay in the level-1 cache; a walk
 * goes on in the next chunk where it stopped): acc and hit zeroed, each
 * product added and hit[c] set, no branch; the caller scans [lo, n_c) for
 * the columns hit.  There, a heavy feature (one that holds at least a
 * 1/HEAVY_SHARE of the columns: heavy[f] >= 0) is added as a dense row of H
 * (its weights, 0.0 where it has none) and P (1 where it has one): every
 * column of the chunk gets v * H[c], a vectorised loop.  The sums do not
 * change: v * 0.0 is a zero, and a zero added to a sum that started at +0.0
 * leaves it as it was (such a sum is never -0.0: +0.0 + -0.0 is +0.0).
 * Other rows list their columns in touched, in the order first reached, as
 * row_sums does.  Returns how many columns were listed (0 when *dense), or
 * -1 with *why set. */
#define DENSE_SPAN 2
#define DENSE_CHUNK 2048
#define HEAVY_SHARE 8
#define HEAVY_BYTES (32 << 20)

typedef struct {
    const int64_t *ap, *bp;
    const int32_t *ai, *bi;
    const double *ad, *bd;
    Py_ssize_t n_a, n_b, n_f, n_c;
    int mode;
    unsigned char *checked;  /* n_f */
    int32_t *heavy;          /* n_f: the feature's row of H and P, or -1; NULL: none */
    double *H;               /* heavy features x n_c */
    unsigned char *P;        /* heavy features x n_c */
    int64_t *starts;         /* the longest row's entries */
    double *acc;             /* n_c */
    unsigned char *hit;      /* n_c; NULL with zero_free: a sum not 0.0 is a hit */
    int32_t *mark, *touched; /* n_c */
} Rows;

/* (AVX2 where the processor has it, chosen at load through an ifunc -- GCC on
 * x86-64 glibc: 4 doubles an instruction; a multiply and an add each, no
 * fused multiply-add, so the same doubles) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && defined(__GLIBC__)
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VECTOR_CLONES
#endif

VECTOR_CLONES static void
axpy(double *restrict y, double a, const double *restrict x, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

VECTOR_CLONES static void
or_bytes(unsigned char *restrict y, const unsigned char *restrict x, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        y[i] |= x[i];
}

/* The dense scan's fast part (pair_topk): from column c on, the hit columns
 * whose sum is quiet -- below the row's floor rf and, with floor, the
 * column's, and within [ql, qh] -- are passed over and counted in *hits;
 * the first hit column that is not is returned (to: none).  8 columns a
 * step: a column not hit has a sum of 0.0, so a step whose 8 sums are all
 * quiet (4 doubles an instruction where GCC's vector types are) holds no
 * loud column and counts its hits; a step that is not is tested one by
 * one.  The same columns and counts as testing each in turn, since only a
 * loud column's offers move a floor.  pair_topk calls it after QUIET_RUN
 * quiet columns in a row (where loud ones are many -- a large k, a row's
 * first columns -- the call costs more than it skips: --top-k 10 on a dense
 * block took 15% less time, --top-k 1000 the same). */
#define QUIET_RUN 6

/* A sum x that changes nothing: below the row's floor rf and its column's
 * f, and within [ql, qh], where every check passes it unchanged */
static inline int
quiet(double x, double rf, double ql, double qh, double f)
{
    return x < rf && x >= ql && x <= qh && x < f;
}

#if defined(__GNUC__)
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));
#define V4(x) ((v4d){(x), (x), (x), (x)})

/* The quiet tests of the 8 sums from column c (next_loud, loud_columns):
 * the sums in x0, x1, and a lane of -1 in q0, q1 where the sum is below the
 * row's floor rf and its column's (floor: none where NULL), and within
 * [ql, qh] */
static inline __attribute__((always_inline)) void
quiet_eight(const double *restrict acc, const double *restrict floor, Py_ssize_t c,
            double rf, double ql, double qh, v4d *x0, v4d *x1, v4l *q0, v4l *q1)
{
    v4d f0 = V4(HUGE_VAL), f1 = V4(HUGE_VAL);
    memcpy(x0, acc + c, sizeof(*x0));
    memcpy(x1, acc + c + 4, sizeof(*x1));
    if (floor) {
        memcpy(&f0, floor + c, sizeof(f0));
        memcpy(&f1, floor + c + 4, sizeof(f1));
    }
    *q0 = (*x0 < V4(rf)) & (*x0 >= V4(ql)) & (*x0 <= V4(qh)) & (*x0 < f0);
    *q1 = (*x1 < V4(rf)) & (*x1 >= V4(ql)) & (*x1 <= V4(qh)) & (*x1 < f1);
}
#endif
VECTOR_CLONES static Py_ssize_t
next_loud(const double *restrict acc, const unsigned char *restrict hit,
          const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf, double ql,
          double qh, int64_t *hits)
{
    int64_t n = 0;
#if defined(__GNUC__)
    for (; c + 8 <= to; c += 8) {
        v4d x0, x1;
        v4l q0, q1;
        quiet_eight(acc, floor, c, rf, ql, qh, &x0, &x1, &q0, &q1);
        v4l q = q0 & q1;
        if (!(q[0] & q[1] & q[2] & q[3]))
            break;
        if (hit) {
            uint64_t h;
            memcpy(&h, hit + c, sizeof(h));
            n += __builtin_popcountll(h);  /* (hit bytes are 0 or 1) */
        }
        else {  /* zero_free: the sums that are not 0.0 (a lane of -1 each) */
            v4l z = (x0 != V4(0.0)) + (x1 != V4(0.0));
            n -= z[0] + z[1] + z[2] + z[3];
        }
    }
#endif
    for (; c < to; c++) {
        if (hit ? !hit[c] : acc[c] == 0.0)
            continue;
        if (!quiet(acc[c], rf, ql, qh, floor ? floor[c] : HUGE_VAL))
            break;
        n++;
    }
    *hits += n;
    return c;
}

/* A dense row's first floor (pair_topk, at a k of at least FIRST_FLOOR_K):
 * there a row's buffer fills and is cut many times before its floor passes
 * most sums by, and each loud sum takes the one-by-one path (most of
 * pair_topk's time at --top-k 1000).  p: the score of an evenly spaced
 * sample of the columns in [lo, to) (a column not hit, or whose sum not
 * every check passes unchanged -- outside [ql, qh] -- counts as -inf) at
 * the rank where about 3k/2 of them would be at least p.  Where at least k
 * hit columns hold a sum within [ql, qh] and not below p, those are offered
 * unchanged, so none below p can be among the row's k best: p is returned
 * as its floor (ties at p are offered, as a cut's floor keeps them), else
 * -inf.  The same entries and counts come out; only fewer offers. */
#define FIRST_FLOOR_K 20
#define FLOOR_SAMPLE 256

VECTOR_CLONES static double
first_floor(const double *restrict acc, const unsigned char *restrict hit, Py_ssize_t lo,
            Py_ssize_t to, Py_ssize_t k, double ql, double qh)
{
    Py_ssize_t span = to - lo;  /* (64-bit products: no overflow where Py_ssize_t is 32) */
    int64_t rank = ((int64_t)k + k / 2) * FLOOR_SAMPLE / (span > 0 ? span : 1);
    if (span < FLOOR_SAMPLE || rank >= FLOOR_SAMPLE / 2)
        return -HUGE_VAL;  /* few columns, or most of them among the best */
    double smp[FLOOR_SAMPLE];
    for (Py_ssize_t i = 0; i < FLOOR_SAMPLE; i++) {
        Py_ssize_t c = lo + (Py_ssize_t)((int64_t)i * span / FLOOR_SAMPLE);
        double x = acc[c];
        smp[i] = (hit ? hit[c] : x != 0.0) && x >= ql && x <= qh ? x : -HUGE_VAL;
    }
    double p = rank_value(smp, FLOOR_SAMPLE, (int)rank);
    if (!(p > -HUGE_VAL))
        return -HUGE_VAL;
    Py_ssize_t n = 0;
    if (hit)
        for (Py_ssize_t c = lo; c < to; c++)
            n += (acc[c] >= p) & (acc[c] >= ql) & (acc[c] <= qh) & (hit[c] != 0);
    else
        for (Py_ssize_t c = lo; c < to; c++)
            n += (acc[c] >= p) & (acc[c] >= ql) & (acc[c] <= qh) & (acc[c] != 0.0);
    return n >= k ? p : -HUGE_VAL;
}

/* The dense scan in one pass, where a first floor leaves few loud columns
 * (pair_topk): the hit columns in [c, to) that are not quiet under the
 * floors as they stand (rf, and floor's where there is one) listed in idx
 * in order, their number returned; the quiet hit ones counted in *hits.  8
 * columns a step, as next_loud; a step that holds a loud column is listed
 * without a branch.  Floors only rise, so a column quiet now stays quiet;
 * the listed ones are tested again as they come. */
VECTOR_CLONES static Py_ssize_t
loud_columns_plain(const double *restrict acc, const unsigned char *restrict hit,
                   const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf,
                   double ql, double qh, int32_t *restrict idx, int64_t *hits)
{
    Py_ssize_t m = 0;
    int64_t n = 0;
#if defined(__GNUC__)
    for (; c + 8 <= to; c += 8) {
        v4d x0, x1;
        v4l q0, q1;
        quiet_eight(acc, floor, c, rf, ql, qh, &x0, &x1, &q0, &q1);
        unsigned quiet = 0, hits;  /* a bit a column */
        for (int i = 0; i < 4; i++)
            quiet |= (unsigned)(q0[i] & 1) << i | (unsigned)(q1[i] & 1) << (i + 4);
        if (hit) {  /* hit bytes of 0 or 1, little-endian: byte i to bit i */
            uint64_t h;
            memcpy(&h, hit + c, sizeof(h));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            hits = (unsigned)((h * 0x0102040810204080ULL) >> 56);
#else
            hits = 0;
            for (int i = 0; i < 8; i++)
                hits |= (unsigned)(hit[c + i] != 0) << i;
#endif
        }
        else {
            v4l z0 = x0 != V4(0.0), z1 = x1 != V4(0.0);
            hits = 0;
            for (int i = 0; i < 4; i++)
                hits |= (unsigned)(z0[i] & 1) << i | (unsigned)(z1[i] & 1) << (i + 4);
        }
        n += __builtin_popcount(hits & quiet);
        for (unsigned loud = hits & ~quiet & 255u; loud; loud &= loud - 1)
            idx[m++] = (int32_t)(c + __builtin_ctz(loud));
    }
#endif
    for (; c < to; c++) {
        double x = acc[c];
        if (hit ? !hit[c] : x == 0.0)
            continue;
        if (quiet(x, rf, ql, qh, floor ? floor[c] : HUGE_VAL))
            n++;
        else
            idx[m++] = (int32_t)c;
    }
    *hits += n;
    return m;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX2_LOUD 1
/* loud_columns_plain with AVX2 instructions: the same tests (ordered
 * comparisons, as C's < <= >= on doubles; a sum not 0.0 where NaN too, as
 * C's !=), each 4 columns' results taken as 4 bits at once (vmovmskpd), where
 * GCC's vector types moved them out one lane at a time (most of the
 * function's time at --top-k 1000) */
__attribute__((target("avx2,popcnt,bmi"))) static Py_ssize_t
loud_columns_avx2(const double *restrict acc, const unsigned char *restrict hit,
                  const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf,
                  double ql, double qh, int32_t *restrict idx, int64_t *hits)
{
    Py_ssize_t m = 0;
    int64_t n = 0;
    const __m256d vrf = _mm256_set1_pd(rf), vql = _mm256_set1_pd(ql), vqh = _mm256_set1_pd(qh);
    const __m256d zero = _mm256_setzero_pd();
    for (; c + 8 <= to; c += 8) {
        __m256d x0 = _mm256_loadu_pd(acc + c), x1 = _mm256_loadu_pd(acc + c + 4);
        __m256d q0 = _mm256_and_pd(
            _mm256_and_pd(_mm256_cmp_pd(x0, vrf, _CMP_LT_OQ), _mm256_cmp_pd(x0, vql, _CMP_GE_OQ)),
            _mm256_cmp_pd(x0, vqh, _CMP_LE_OQ));
        __m256d q1 = _mm256_and_pd(
            _mm256_and_pd(_mm256_cmp_pd(x1, vrf, _CMP_LT_OQ), _mm256_cmp_pd(x1, vql, _CMP_GE_OQ)),
            _mm256_cmp_pd(x1, vqh, _CMP_LE_OQ));
        if (floor) {
            q0 = _mm256_and_pd(q0, _mm256_cmp_pd(x0, _mm256_loadu_pd(floor + c), _CMP_LT_OQ));
            q1 = _mm256_and_pd(q1, _mm256_cmp_pd(x1, _mm256_loadu_pd(floor + c + 4), _CMP_LT_OQ));
        }
        unsigned quiet = (unsigned)_mm256_movemask_pd(q0) | (unsigned)_mm256_movemask_pd(q1) << 4;
        unsigned hits8;
        if (hit) {  /* hit bytes of 0 or 1, little-endian: byte i to bit i */
            uint64_t h;
            memcpy(&h, hit + c, sizeof(h));
            hits8 = (unsigned)((h * 0x0102040810204080ULL) >> 56);
        }
        else
            hits8 = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(x0, zero, _CMP_NEQ_UQ))
                    | (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(x1, zero, _CMP_NEQ_UQ)) << 4;
        n += __builtin_popcount(hits8 & quiet);
        for (unsigned loud = hits8 & ~quiet & 255u; loud; loud &= loud - 1)
            idx[m++] = (int32_t)(c + __builtin_ctz(loud));
    }
    *hits += n;
    return m + loud_columns_plain(acc, hit, floor, c, to, rf, ql, qh, idx + m, hits);
}
#endif

/* loud_columns_plain, with AVX2 where the processor has it (have_avx2, set
 * at import) */
static int have_avx2 = 0;

#ifdef HAVE_AVX2_LOUD
/* whether the processor runs loud_columns_avx2's instructions */
static int
cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")
           && __builtin_cpu_supports("bmi");
}
#endif

static Py_ssize_t
loud_columns(const double *restrict acc, const unsigned char *restrict hit,
             const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf, double ql,
             double qh, int32_t *restrict idx, int64_t *hits)
{
#ifdef HAVE_AVX2_LOUD
    if (have_avx2)
        return loud_columns_avx2(acc, hit, floor, c, to, rf, ql, qh, idx, hits);
#endif
    return loud_columns_plain(acc, hit, floor, c, to, rf, ql, qh, idx, hits);
}

/* The heavy features' dense rows (w->heavy, H, P), up to HEAVY_BYTES; a
 * feature with an index out of range or a column twice is left out (its
 * walk finds the index).  0, or -1 when out of memory. */
static int
heavy_rows(Rows *w)
{
    Py_ssize_t n_c = w->n_c, n_h = 0, cap = 0;
    if (n_c < HEAVY_SHARE)
        return 0;
    cap = HEAVY_BYTES / (n_c * (Py_ssize_t)(sizeof(double) + 1));
    for (Py_ssize_t f = 0; f < w->n_f && n_h < cap; f++) {
        int64_t ks = w->bp[f], ke = w->bp[f + 1];
        if (ks >= 0 && ke >= ks && ke <= w->n_b && (ke - ks) * HEAVY_SHARE >= n_c)
            n_h++;
    }
    if (!n_h)
        return 0;
    w->heavy = malloc(w->n_f * sizeof(int32_t));
    w->H = calloc((size_t)n_h * n_c, sizeof(double));
    w->P = calloc((size_t)n_h * n_c, 1);
    if (!w->heavy || !w->H || !w->P)
        return -1;
    Py_ssize_t h = 0;
    for (Py_ssize_t f = 0; f < w->n_f; f++) {
        w->heavy[f] = -1;
        int64_t ks = w->bp[f], ke = w->bp[f + 1];
        if (h >= n_h || ks < 0 || ke < ks || ke > w->n_b || (ke - ks) * HEAVY_SHARE < n_c)
            continue;
        double *hr = w->H + h * n_c;
        unsigned char *pr = w->P + h * n_c;
        int64_t kk = ks;
        for (; kk < ke; kk++) {
            int32_t c = w->bi[kk];
            if (c < 0 || c >= n_c || pr[c])
                break;
            pr[c] = 1;
            hr[c] = w->bd[kk];
        }
        if (kk < ke) {  /* malformed: walked, where the checks are */
            memset(hr, 0, n_c * sizeof(double));
            memset(pr, 0, n_c);
            continue;
        }
        w->heavy[f] = (int32_t)h++;
    }
    return 0;
}

static inline Py_ssize_t
topk_row_sums(Rows *w, Py_ssize_t r, int64_t lo, int32_t row, int *dense, const char **why)
{
    const int64_t *bp = w->bp;
    const int32_t *ai = w->ai, *bi = w->bi;
    const double *ad = w->ad, *bd = w->bd;
    Py_ssize_t n_c = w->n_c;
    int64_t *starts = w->starts;
    double *acc = w->acc;
    int64_t s = w->ap[r], e = w->ap[r + 1];
    if (s < 0 || e < s || e > w->n_a)
        return -1;
    int64_t est = 0;
    int ascending = 1;
    for (int64_t jj = s; jj < e; jj++) {
        int32_t f = ai[jj];
        if (f < 0 || f >= w->n_f)
            return -1;
        int64_t ks = bp[f], ke = bp[f + 1];
        if (ks < 0 || ke < ks || ke > w->n_b)
            return -1;
        if (!w->checked[f]) {
            w->checked[f] = 1;
            for (int64_t kk = ks; kk < ke; kk++) {
                if (bi[kk] < 0 || bi[kk] >= n_c)
                    return -1;
                if (kk > ks && bi[kk] < bi[kk - 1])
                    w->checked[f] = 2;
            }
            if (w->mode && w->checked[f] == 2) {
                *why = "a feature's columns (bt_indices) not ascending";
                return -1;
            }
        }
        if (w->checked[f] == 2 && !(w->heavy && w->heavy[f] >= 0))
            ascending = 0;
        if (w->mode && ks < ke && bi[ks] < lo) {  /* the first column >= lo */
            int64_t l = ks + 1, h = ke;
            while (l < h) {
                int64_t mid = l + (h - l) / 2;
                if (bi[mid] < lo)
                    l = mid + 1;
                else
                    h = mid;
            }
            ks = l;
        }
        starts[jj - s] = ks;
        est += ke - ks;
    }
    *dense = ascending && est > 0 && est * DENSE_SPAN >= n_c - lo;
    if (*dense) {
        unsigned char *hit = w->hit;
        for (int64_t c0 = lo; c0 < n_c; c0 += DENSE_CHUNK) {
            int64_t c1 = n_c - c0 > DENSE_CHUNK ? c0 + DENSE_CHUNK : n_c;
            memset(acc + c0, 0, (size_t)(c1 - c0) * sizeof(double));
            if (hit)
                memset(hit + c0, 0, (size_t)(c1 - c0));
            for (int64_t jj = s; jj < e; jj++) {
                double v = ad[jj];
                int32_t f = ai[jj];
                int32_t h = w->heavy ? w->heavy[f] : -1;
                if (h >= 0) {
                    axpy(acc + c0, v, w->H + (Py_ssize_t)h * n_c + c0, c1 - c0);
                    if (hit)
                        or_bytes(hit + c0, w->P + (Py_ssize_t)h * n_c + c0, c1 - c0);
                    continue;
                }
                int64_t kk = starts[jj - s], ke = bp[f + 1];
                if (!hit) {
                    for (; kk < ke && bi[kk] < c1; kk++)
                        acc[bi[kk]] += v * bd[kk];
                }
                else {
                    for (; kk < ke && bi[kk] < c1; kk++) {
                        int32_t c = bi[kk];
                        acc[c] += v * bd[kk];
                        hit[c] = 1;
                    }
                }
                starts[jj - s] = kk;
            }
        }
        return 0;
    }
    int32_t *mark = w->mark, *touched = w->touched;
    Py_ssize_t m = 0;
    for (int64_t jj = s; jj < e; jj++) {
        double v = ad[jj];
        int64_t ke = bp[ai[jj] + 1];
        for (int64_t kk = starts[jj - s]; kk < ke; kk++) {
            int32_t c = bi[kk];
            if (mark[c] != row) {
                mark[c] = row;
                acc[c] = 0.0;
                touched[m++] = c;
            }
            acc[c] += v * bd[kk];
        }
    }
    return m;
}

/* Seeds (pair_topk, a diagonal block's triangle taken bottom-up on threads):
 * seeds[c], once row c is done, is the k-th best score of its own columns
 * (those after it) -- -inf until then, or where it has fewer than k.  Row c
 * then holds k entries not below it, each of a column after c; an offer to
 * column c comes from a row before c, so one below seeds[c] can never be
 * among c's k best (one equal to it can: ties go to the smaller other) and
 * a thread's floor for column c can be raised to it.  Taken bottom-up, most
 * columns' floors start from their own row's k-th best: about k n offers to
 * the columns' buffers in all, where top-down, from -inf, about k ln(n/k) a
 * column.  Read and written by every thread: atomic loads and stores of the
 * doubles. */
#if defined(__GNUC__)
static inline int
raise_to_seed(double *floor, const double *seed)
{
    double sd;
    __atomic_load(seed, &sd, __ATOMIC_RELAXED);
    if (!(*floor < sd))
        return 0;
    *floor = sd;
    return 1;
}

static inline void
store_seed(double *seed, const double *rs, int64_t h)
{
    double worst = rs[0];
    for (int64_t t = 1; t < h; t++)
        if (rs[t] < worst)
            worst = rs[t];
    __atomic_store(seed, &worst, __ATOMIC_RELAXED);
}
#else
static inline int raise_to_seed(double *floor, const double *seed) { return 0; }
static inline void store_seed(double *seed, const double *rs, int64_t h) {}
#endif

static PyObject *
pair_topk(PyObject *self, PyObject *args)
{
    PyObject *o[15];
    Py_ssize_t n_c, r0, r1, k, k_c, cap;
    int mode, kind, mirror, merge, zero_free = 0;
    double threshold, limit;
    o[14] = Py_None;
    if (!PyArg_ParseTuple(args, "OOOOOOnnniniddpnnOOOOpO|iO", &o[0], &o[1], &o[2], &o[3],
                          &o[4], &o[5], &n_c, &r0, &r1, &mode, &k, &kind, &threshold, &limit,
                          &mirror, &k_c, &cap, &o[9], &o[10], &o[11], &o[12], &merge, &o[13],
                          &zero_free, &o[14]))
        return NULL;
    Arr a[15];
    memset(a, 0, sizeof(a));
    static const int kinds[15] = {I64, I32, F64, I64, I32, F64, -1, -1, -1,
                                  F64, I64, I64, F64, I64, F64};
    static const char *const names[15] = {"a_indptr", "a_indices", "a_data", "bt_indptr",
                                          "bt_indices", "bt_data", NULL, NULL, NULL,
                                          "ks", "ko", "kn", "floor", "counts", "seeds"};
    for (int i = 0; i < 15; i++)
        if (kinds[i] >= 0 && !(i == 14 && o[i] == Py_None)
                && get_arr(o[i], &a[i], kinds[i], i >= 9 ? OUT : IN, names[i]) < 0) {
            release(a, 15);
            return NULL;
        }
    PyObject *result = NULL;
    Py_ssize_t n_f = a[3].n - 1;
    /* the row's candidates: at most n_c (distinct columns), so a k beyond
     * that keeps them all */
    Py_ssize_t k_r = k < n_c ? k : (n_c > 0 ? n_c : 1);
    if (r0 < 0 || r1 < r0 || r1 >= a[0].n || n_c < 0 || n_f < 0 || mode < 0 || mode > 3
        || a[1].n != a[2].n || a[4].n != a[5].n || k < 1 || kind < 0 || kind > 1
        || a[13].n < 4 || r1 - r0 >= INT32_MAX || n_c >= INT32_MAX
        || size_mul(n_c, (Py_ssize_t)sizeof(double)) < 0) {
        release(a, 15);
        return bad("pair_topk: shapes");
    }
    Py_ssize_t slots = mirror ? size_mul(n_c, cap) : 0;
    if (mirror && (k_c < 1 || cap <= k_c || slots < 0 || a[9].n != slots || a[10].n != slots
                   || a[11].n != n_c || a[12].n != n_c)) {
        release(a, 15);
        return bad("pair_topk: the columns' buffers");
    }
    if (merge && (!mirror || mode == 0 || mode == 3 || r1 > n_c)) {
        release(a, 15);
        return bad("pair_topk: merge needs a diagonal block and its mirror");
    }
    if (mode == 3 && (mirror || r1 > n_c)) {
        release(a, 15);
        return bad("pair_topk: whole rows (mode 3) need one block, without its mirror");
    }
#if defined(__GNUC__)
    double *seeds = o[14] == Py_None ? NULL : F64P(a[14]);
#else
    double *seeds = NULL;  /* (no atomic loads and stores: rows top-down, no seeds) */
#endif
    if (o[14] != Py_None && (!mirror || merge || (mode != 1 && mode != 2) || r1 > n_c
                             || a[14].n != n_c)) {
        release(a, 15);
        return bad("pair_topk: seeds need a diagonal block's triangle and its mirror, "
                   "unmerged, a seed a column");
    }
    const int64_t *ap = I64P(a[0]), *bp = I64P(a[3]);
    const int32_t *ai = I32P(a[1]), *bi = I32P(a[4]);
    const double *ad = F64P(a[2]), *bd = F64P(a[5]);
    /* the outputs, grown as rows fill them */
    int64_t *out_g = NULL, *out_o = NULL;
    double *out_s = NULL;
    Py_ssize_t out_cap = 0;
    double *ks = mirror ? F64P(a[9]) : NULL, *floor = mirror ? F64P(a[12]) : NULL;
    int64_t *ko = mirror ? I64P(a[10]) : NULL, *kn = mirror ? I64P(a[11]) : NULL;
    int64_t *counts = I64P(a[13]);
    Py_ssize_t rcap = k_r + (k_r > 16 ? k_r / 2 : 8);
    double *rs = NULL;
    int64_t *ro = NULL;
    Keyed *row_scratch = NULL;
    Rows w = {ap, bp, ai, bi, ad, bd, a[1].n, a[4].n, n_f, n_c, mode};
    /* the longest row's entries: where each of its walks starts */
    Py_ssize_t longest = 1;
    for (Py_ssize_t r = r0; r < r1; r++)
        if (ap[r] >= 0 && ap[r + 1] >= ap[r] && ap[r + 1] <= a[1].n
                && ap[r + 1] - ap[r] > longest)
            longest = (Py_ssize_t)(ap[r + 1] - ap[r]);
    w.starts = malloc(longest * sizeof(int64_t));
    w.checked = calloc(n_f ? n_f : 1, 1);
    if (!w.starts || !w.checked) {
        PyErr_NoMemory();
        goto done;
    }
    if (n_c) {
        w.acc = malloc(n_c * sizeof(double));
        w.hit = zero_free ? NULL : malloc(n_c);  /* no hit bytes: see zero_free */
        w.mark = malloc(n_c * sizeof(int32_t));
        w.touched = malloc(n_c * sizeof(int32_t));
        rs = malloc(rcap * sizeof(double));
        ro = malloc(rcap * sizeof(int64_t));
        if (mode == 3)
            row_scratch = malloc(3 * rcap * sizeof(Keyed));
        if (!w.acc || (!w.hit && !zero_free) || !w.mark || !w.touched || !rs || !ro
                || (mode == 3 && !row_scratch) || heavy_rows(&w) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t c = 0; c < n_c; c++)
            w.mark[c] = -1;
    }
    double *acc = w.acc;
    const unsigned char *hit = w.hit;
    Py_ssize_t n = 0, m = 0;
    int64_t scored = 0, not_finite = 0, below = 0;
    int ok = 1, unit_error = 0, no_memory = 0;
    double bad_sum = 0.0;
    const int finite_only = limit == HUGE_VAL;
    const char *why = "an index out of range";
    uint64_t seed = SEED;
    /* [quiet_lo, quiet_hi]: the scores that pass every check unchanged (kind
     * 1: not snapped; in the limit; not below the threshold); such a score
     * below its row's floor and its column's changes nothing and is passed
     * over at once (the same counts, offers and errors) */
    double quiet_lo = finite_only ? -DBL_MAX : -limit, quiet_hi = finite_only ? DBL_MAX : limit;
    if (kind == 1) {
        quiet_lo = fmax(quiet_lo, nextafter(UNIT_SNAP - 1.0, HUGE_VAL));
        quiet_hi = fmin(quiet_hi, nextafter(1.0 - UNIT_SNAP, -HUGE_VAL));
    }
    quiet_lo = fmax(quiet_lo, threshold);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = r0; i < r1 && ok; i++) {
        Py_ssize_t r = seeds ? r1 - 1 - (i - r0) : i;  /* (seeds: bottom-up) */
        int64_t lo = mode == 1 ? r + 1 : (mode == 2 ? r : 0);
        int dense = 0;
        Py_ssize_t nt = topk_row_sums(&w, r, lo, (int32_t)(i - r0), &dense, &why);
        if (nt < 0) {
            ok = 0;
            break;
        }
        if (mode == 3 && dense) {  /* the row itself: as a column it never reached */
            acc[r] = 0.0;
            if (w.hit)
                w.hit[r] = 0;
        }
        int64_t h = 0;
        double rfloor = dense && k_r >= FIRST_FLOOR_K
                            ? first_floor(acc, hit, lo, n_c, k_r, quiet_lo, quiet_hi)
                            : -HUGE_VAL;
        if (dense && rfloor > -HUGE_VAL) {  /* few loud columns: listed, then walked */
            int64_t quiet = 0;
            nt = loud_columns(acc, hit, mirror ? floor : NULL, lo, n_c, rfloor, quiet_lo,
                              quiet_hi, w.touched, &quiet);
            n += quiet;
            scored += quiet;
            dense = 0;
        }
        Py_ssize_t loud = lo - 1;  /* the last column that was not quiet */
        /* the row's columns: listed in touched, or (dense) hit in [lo, n_c) */
        for (Py_ssize_t t = 0, c = lo - 1;;) {
            if (dense) {
                if (c - loud >= QUIET_RUN) {
                    int64_t quiet = 0;
                    c = next_loud(acc, hit, mirror ? floor : NULL, c + 1, n_c, rfloor,
                                  quiet_lo, quiet_hi, &quiet);
                    n += quiet;
                    scored += quiet;
                }
                else
                    do
                        c++;
                    while (c < n_c && (hit ? !hit[c] : acc[c] == 0.0));
                if (c >= n_c)
                    break;
            }
            else if (t < nt) {
                c = w.touched[t++];
                if (mode == 3 && c == r)
                    continue;
            }
            else
                break;
            n++;
            scored++;
            double sc = acc[c];
            if (quiet(sc, rfloor, quiet_lo, quiet_hi, mirror ? floor[c] : HUGE_VAL))
                continue;
            if (seeds && raise_to_seed(floor + c, seeds + c)
                    && quiet(sc, rfloor, quiet_lo, quiet_hi, floor[c]))
                continue;
            loud = c;
            if (kind == 1) {
                if (sc > UNIT_LIMIT || sc < -UNIT_LIMIT) {
                    unit_error = 1;
                    bad_sum = sc;
                    ok = 0;
                    break;
                }
                if (sc != sc) {  /* as Measure.score: not a score of prepared vectors */
                    unit_error = 2;
                    ok = 0;
                    break;
                }
                if (sc >= 1.0 - UNIT_SNAP)
                    sc = 1.0;
                else if (sc <= UNIT_SNAP - 1.0)
                    sc = -1.0;
            }
            if (finite_only ? !isfinite(sc) : !(fabs(sc) <= limit)) {
                not_finite++;
                continue;
            }
            if (sc < threshold) {
                below++;
                continue;
            }
            if (!(sc < rfloor))
                buffer_offer(rs, ro, &h, k_r, rcap, &rfloor, sc, c, &seed);
            if (mirror && !(sc < floor[c]) && (mode == 0 || c != r)) {
                if (kn[c] < 0 || kn[c] >= cap) {
                    ok = 0;
                    why = "pair_topk: a column's buffer count out of range";
                    break;
                }
                buffer_offer(ks + c * cap, ko + c * cap, kn + c, k_c, cap, floor + c, sc, r,
                             &seed);
            }
        }
        if (!ok)
            break;
        if (merge) {
            int64_t held = kn[r];
            if (held < 0 || held >= cap) {
                ok = 0;
                why = "pair_topk: a column's buffer count out of range";
                break;
            }
            for (int64_t t = 0; t < held; t++) {
                double sc = ks[r * cap + t];
                if (!(sc < rfloor))
                    buffer_offer(rs, ro, &h, k_r, rcap, &rfloor, sc, ko[r * cap + t], &seed);
            }
            kn[r] = 0;
            floor[r] = -HUGE_VAL;
        }
        select_best(rs, ro, h, k_r, &seed);
        if (h > k_r)
            h = k_r;
        if (seeds && h == k_r)
            store_seed(seeds + r, rs, h);
        if (mode == 3)  /* a whole row: in its output order, on the caller's thread */
            sort_row_best(rs, ro, h, row_scratch, &seed);
        if (m + h > out_cap) {
            Py_ssize_t grown = out_cap ? out_cap : 1024;
            while (grown < m + h)
                grown = size_mul(grown, 2) < 0 ? -1 : 2 * grown;
            int64_t *g2 = grown < 0 ? NULL : PyMem_RawRealloc(out_g, grown * sizeof(int64_t));
            if (g2)
                out_g = g2;
            int64_t *o2 = g2 ? PyMem_RawRealloc(out_o, grown * sizeof(int64_t)) : NULL;
            if (o2)
                out_o = o2;
            double *s2 = o2 ? PyMem_RawRealloc(out_s, grown * sizeof(double)) : NULL;
            if (!s2) {
                no_memory = 1;
                ok = 0;
                break;
            }
            out_s = s2;
            out_cap = grown;
        }
        for (int64_t t = 0; t < h; t++) {
            out_g[m] = r;
            out_o[m] = ro[t];
            out_s[m] = rs[t];
            m++;
        }
    }
    Py_END_ALLOW_THREADS
    if (unit_error == 2)
        PyErr_SetString(PyExc_ValueError, "a sum of products of unit weights is nan: dots, "
                        "statistics or n_features do not come from prepared vectors");
    else if (unit_error) {
        PyObject *v = PyFloat_FromDouble(bad_sum);
        if (v) {
            PyErr_Format(PyExc_ValueError, "a sum of products of unit weights is %R, beyond "
                         "rounding of +-1: were the weights prepared for this measure?", v);
            Py_DECREF(v);
        }
    }
    else if (no_memory)
        PyErr_NoMemory();
    else if (!ok)
        bad(why);
    else {
        counts[0] += scored;
        counts[1] += not_finite;
        counts[2] += below;
        counts[3] += n;
        static const char empty[1] = "";
        result = Py_BuildValue("(y#y#y#)", m ? (const char *)out_g : empty, m * 8,
                               m ? (const char *)out_o : empty, m * 8,
                               m ? (const char *)out_s : empty, m * 8);
    }
done:
    PyMem_RawFree(out_g);
    PyMem_RawFree(out_o);
    PyMem_RawFree(out_s);
    free(w.acc);
    free(w.hit);
    free(w.mark);
    free(w.touched);
    free(w.starts);
    free(w.checked);
    free(w.heavy);
    free(w.H);
    free(w.P);
    free(rs);
    free(ro);
    free(row_scratch);
    release(a, 15);
    return result;
}

/*
 * repr(float) of a finite double, fast: the shortest digits that read back as
 * the same double (the closest to it among those, ties to even), found by
 * Ulf Adams's Ryu algorithm ("Ryu: fast float-to-string conversion", PLDI
 * 2018), where CPython's repr runs David Gay's dtoa (about 1 us a score
 * here, most of an output line's time at --top-k 1000); then written as
 * repr writes them: exponent form when the decimal point is more than 16
 * places right or 4 places left of the first digit, else positional with at
 * least one digit after the point.  tests/jobs/test_protocols_c.py compares
 * it with repr on millions of doubles.  The 128-bit powers of 5 it
 * multiplies by are computed at import, with Python's integers (ryu_tables).
 */
#ifdef __SIZEOF_INT128__
#define HAVE_RYU 1
#define POW5_INV_BITCOUNT 125
#define POW5_BITCOUNT 125
#define POW5_INV_TABLE 342
#define POW5_TABLE 326

static uint64_t POW5_INV_SPLIT[POW5_INV_TABLE][2], POW5_SPLIT[POW5_TABLE][2];
static int ryu_ready = 0;

static inline int32_t pow5bits(int32_t e) { return (int32_t)(((uint32_t)e * 1217359) >> 19) + 1; }
static inline uint32_t log10_pow2(int32_t e) { return ((uint32_t)e * 78913) >> 18; }
static inline uint32_t log10_pow5(int32_t e) { return ((uint32_t)e * 732923) >> 20; }

static inline uint32_t
pow5_factor(uint64_t v)
{
    uint32_t n = 0;
    for (;;) {
        uint64_t q = v / 5;
        if (v - 5 * q != 0)
            return n;
        v = q;
        n++;
    }
}

static inline uint64_t
mul_shift(uint64_t m, const uint64_t *mul, int32_t j)
{
    unsigned __int128 b0 = (unsigned __int128)m * mul[0];
    unsigned __int128 b2 = (unsigned __int128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

/* the shortest digits of a positive finite double: *digits, and *exp with
 * value = digits * 10^exp */
static void
ryu_d2d(uint64_t mantissa, uint32_t exponent, uint64_t *digits, int32_t *exp)
{
    int32_t e2;
    uint64_t m2;
    if (exponent == 0) {
        e2 = 1 - 1023 - 52 - 2;
        m2 = mantissa;
    }
    else {
        e2 = (int32_t)exponent - 1023 - 52 - 2;
        m2 = (1ULL << 52) | mantissa;
    }
    const int accept_bounds = (m2 & 1) == 0;
    const uint64_t mv = 4 * m2;
    const uint32_t mm_shift = mantissa != 0 || exponent <= 1;
    uint64_t vr, vp, vm;
    int32_t e10;
    int vm_zeros = 0, vr_zeros = 0;
    if (e2 >= 0) {
        const uint32_t q = log10_pow2(e2) - (e2 > 3);
        e10 = (int32_t)q;
        const int32_t k = POW5_INV_BITCOUNT + pow5bits((int32_t)q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        vr = mul_shift(4 * m2, POW5_INV_SPLIT[q], i);
        vp = mul_shift(4 * m2 + 2, POW5_INV_SPLIT[q], i);
        vm = mul_shift(4 * m2 - 1 - mm_shift, POW5_INV_SPLIT[q], i);
        if (q <= 21) {
            if (mv % 5 == 0)
                vr_zeros = pow5_factor(mv) >= q;
            else if (accept_bounds)
                vm_zeros = pow5_factor(mv - 1 - mm_shift) >= q;
            else
                vp -= pow5_factor(mv + 2) >= q;
        }
    }
    else {
        const uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = pow5bits(i) - POW5_BITCOUNT;
        const int32_t j = (int32_t)q - k;
        vr = mul_shift(4 * m2, POW5_SPLIT[i], j);
        vp = mul_shift(4 * m2 + 2, POW5_SPLIT[i], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, POW5_SPLIT[i], j);
        if (q <= 1) {
            vr_zeros = 1;
            if (accept_bounds)
                vm_zeros = mm_shift == 1;
            else
                vp--;
        }
        else if (q < 63)
            vr_zeros = (mv & ((1ULL << q) - 1)) == 0;
    }
    int32_t removed = 0;
    uint8_t last = 0;
    uint64_t out;
    if (vm_zeros || vr_zeros) {
        while (vp / 10 > vm / 10) {
            vm_zeros &= vm % 10 == 0;
            vr_zeros &= last == 0;
            last = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        if (vm_zeros)
            while (vm % 10 == 0) {
                vr_zeros &= last == 0;
                last = (uint8_t)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                removed++;
            }
        if (vr_zeros && last == 5 && vr % 2 == 0)
            last = 4;  /* round half to even */
        out = vr + ((vr == vm && (!accept_bounds || !vm_zeros)) || last >= 5);
    }
    else {
        int round_up = 0;
        if (vp / 100 > vm / 100) {
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        out = vr + (vr == vm || round_up);
    }
    *digits = out;
    *exp = e10 + removed;
}

/* "00" "01" ... "99" */
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* the 8 digits of x < 10^8, leading zeros included, ending at end */
static inline void
eight_digits(uint32_t x, char *end)
{
    for (int i = 0; i < 4; i++) {
        uint32_t q = x / 100;
        memcpy(end - 2 * (i + 1), DIGIT_PAIRS + 2 * (x - 100 * q), 2);
        x = q;
    }
}

/* The decimal digits of x > 0 (at most 20), ending at end; their count.  Two
 * digits a division, and the low eight digits apart from the rest in 32-bit
 * arithmetic: a chain of divisions a third as long as a digit at a time,
 * which took most of repr_double's time. */
static int
decimal_digits(uint64_t x, char *end)
{
    char *p = end;
    while (x >= 100000000) {
        uint64_t q = x / 100000000;
        eight_digits((uint32_t)(x - 100000000 * q), p);
        p -= 8;
        x = q;
    }
    uint32_t y = (uint32_t)x;
    while (y >= 100) {
        uint32_t q = y / 100;
        p -= 2;
        memcpy(p, DIGIT_PAIRS + 2 * (y - 100 * q), 2);
        y = q;
    }
    if (y >= 10) {
        p -= 2;
        memcpy(p, DIGIT_PAIRS + 2 * y, 2);
    }
    else
        *--p = (char)('0' + y);
    return (int)(end - p);
}

/* repr(v) of a finite double into w (at most 24 bytes); returns its length */
static int
repr_double(double v, char *w)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    char *start = w;
    if (bits >> 63)
        *w++ = '-';
    uint64_t mantissa = bits & ((1ULL << 52) - 1);
    uint32_t exponent = (uint32_t)((bits >> 52) & 0x7ff);
    if (!mantissa && !exponent) {
        memcpy(w, "0.0", 3);
        return (int)(w - start) + 3;
    }
    uint64_t digits;
    int32_t e;
    ryu_d2d(mantissa, exponent, &digits, &e);
    char d[24];
    int n = decimal_digits(digits, d + 24);
    const char *ds = d + 24 - n;
    int decpt = n + e;  /* value = 0.ds * 10^decpt */
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            *w++ = '0';
            *w++ = '.';
            for (int i = 0; i < -decpt; i++)
                *w++ = '0';
            memcpy(w, ds, n);
            w += n;
        }
        else if (decpt < n) {
            memcpy(w, ds, decpt);
            w += decpt;
            *w++ = '.';
            memcpy(w, ds + decpt, n - decpt);
            w += n - decpt;
        }
        else {
            memcpy(w, ds, n);
            w += n;
            for (int i = n; i < decpt; i++)
                *w++ = '0';
            *w++ = '.';
            *w++ = '0';
        }
    }
    else {
        *w++ = ds[0];
        if (n > 1) {
            *w++ = '.';
            memcpy(w, ds + 1, n - 1);
            w += n - 1;
        }
        int x = decpt - 1;
        *w++ = 'e';
        *w++ = x < 0 ? '-' : '+';
        if (x < 0)
            x = -x;
        if (x >= 100)
            *w++ = (char)('0' + x / 100);
        *w++ = (char)('0' + x / 10 % 10);
        *w++ = (char)('0' + x % 10);
    }
    return (int)(w - start);
}

/* the low and high 64 bits of a non-negative Python int below 2**128 */
static int
split128(PyObject *x, uint64_t *out)
{
    PyObject *mask = PyLong_FromUnsignedLongLong(~0ULL), *sixty_four = PyLong_FromLong(64);
    PyObject *lo = NULL, *hi = NULL;
    int ok = -1;
    if (mask && sixty_four && (lo = PyNumber_And(x, mask))
        && (hi = PyNumber_Rshift(x, sixty_four))) {
        out[0] = PyLong_AsUnsignedLongLong(lo);
        out[1] = PyLong_AsUnsignedLongLong(hi);
        ok = PyErr_Occurred() ? -1 : 0;
    }
    Py_XDECREF(mask);
    Py_XDECREF(sixty_four);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    return ok;
}

#endif /* __SIZEOF_INT128__ */

/* Ryu's tables, exactly: POW5_SPLIT[i] = 5^i cut to its top 125 bits,
 * POW5_INV_SPLIT[i] = floor(2^(bits(5^i) - 1 + 125) / 5^i) + 1 */
static int
ryu_tables(void)
{
#ifndef HAVE_RYU
    return 0;  /* no 128-bit integers: repr's own dtoa serves */
#else
    PyObject *pow = PyLong_FromLong(1), *five = PyLong_FromLong(5), *one = PyLong_FromLong(1);
    int ok = pow && five && one;
    for (int i = 0; ok && i < POW5_INV_TABLE; i++) {
        if (i) {
            PyObject *next = PyNumber_Multiply(pow, five);
            Py_SETREF(pow, next);
            if (!pow) {
                ok = 0;
                break;
            }
        }
        PyObject *bits = PyObject_CallMethod(pow, "bit_length", NULL);
        int64_t len = bits ? PyLong_AsLongLong(bits) : -1;
        Py_XDECREF(bits);
        if (len < 0) {
            ok = 0;
            break;
        }
        PyObject *shift = NULL, *t = NULL, *q = NULL;
        if (i < POW5_TABLE) {
            shift = PyLong_FromLongLong(len > POW5_BITCOUNT ? len - POW5_BITCOUNT
                                                             : POW5_BITCOUNT - len);
            t = shift ? (len > POW5_BITCOUNT ? PyNumber_Rshift(pow, shift)
                                             : PyNumber_Lshift(pow, shift)) : NULL;
            ok = t && split128(t, POW5_SPLIT[i]) == 0;
            Py_XDECREF(shift);
            Py_XDECREF(t);
            shift = t = NULL;
        }
        if (ok) {
            shift = PyLong_FromLongLong(len - 1 + POW5_INV_BITCOUNT);
            t = shift ? PyNumber_Lshift(one, shift) : NULL;
            q = t ? PyNumber_FloorDivide(t, pow) : NULL;
            Py_XDECREF(t);
            t = q ? PyNumber_Add(q, one) : NULL;
            ok = t && split128(t, POW5_INV_SPLIT[i]) == 0;
        }
        Py_XDECREF(shift);
        Py_XDECREF(t);
        Py_XDECREF(q);
    }
    Py_XDECREF(pow);
    Py_XDECREF(five);
    Py_XDECREF(one);
    if (!ok)
        return -1;
    ryu_ready = 1;
    return 0;
#endif
}

/* repr(v) of a finite double into w (at most 24 bytes): Ryu where the
 * tables are there, else CPython's own; its length, or -1 (an error set) */
static int
format_score(double v, char *w)
{
#ifdef HAVE_RYU
    if (ryu_ready)
        return repr_double(v, w);
#endif
    char *r = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!r)
        return -1;
    size_t len = strlen(r);
    if (len > 24) {  /* cannot happen for a finite double */
        PyMem_Free(r);
        PyErr_SetString(PyExc_ValueError, "neighbours_json: a score's repr too long");
        return -1;
    }
    memcpy(w, r, len);
    PyMem_Free(r);
    return (int)len;
}

/* repr_floats(scores d) -> list of str: repr_double of each (finite) score,
 * for the tests */
static PyObject *
repr_floats(PyObject *self, PyObject *arg)
{
    Arr a;
    if (get_arr(arg, &a, F64, IN_ANY, "scores") < 0) {
        release(&a, 1);
        return NULL;
    }
    PyObject *list = PyList_New(a.n);
    for (Py_ssize_t i = 0; list && i < a.n; i++) {
        double v = f64_at(a.p, i);
        if (!isfinite(v)) {
            Py_CLEAR(list);
            PyErr_SetString(PyExc_ValueError, "repr_floats: a score not finite");
            break;
        }
        char buf[32];
        int len = format_score(v, buf);
        if (len < 0) {
            Py_CLEAR(list);
            break;
        }
        PyObject *s = PyUnicode_FromStringAndSize(buf, len);
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, s);
    }
    release(&a, 1);
    return list;
}

/*
 * neighbours_json(ids, scores d[, key]) -> bytes or None
 *
 * The body of a JSON output line: '"<uuid>": <score>' for each neighbour,
 * joined by ", " -- the bytes json.dumps writes for a dict of UUID strings
 * to floats (lower-case hex, 8-4-4-4-12; each score as repr(float) writes
 * it, by the same CPython function).  ids: 16 bytes a neighbour.  With key
 * (16 bytes), the whole line: '"<key's uuid>" TAB {' body '}', written in
 * one buffer (a line at --top-k 1000 is ~60 kB: no copies of it).  None
 * when a score is not finite or an id repeats: json.dumps of a dict does
 * other things there, which the caller does.
 */

/* '"<uuid>"' of 16 id bytes at w (38 bytes); the end */
static inline char *
quoted_hex_uuid(const unsigned char *id, char *w)
{
    static const char hex[] = "0123456789abcdef";
    *w++ = '"';
    for (int b = 0; b < 16; b++) {
        if (b == 4 || b == 6 || b == 8 || b == 10)
            *w++ = '-';
        *w++ = hex[id[b] >> 4];
        *w++ = hex[id[b] & 15];
    }
    *w++ = '"';
    return w;
}

/* True if two of the n 16-byte ids are equal (an open-addressing set). */
static int
has_repeats(const unsigned char *ids, Py_ssize_t n, int *error)
{
    *error = 0;
    if (n < 2)
        return 0;
    /* the slots: fewer than 4 n of them */
    if (size_mul(n, 4 * (Py_ssize_t)sizeof(Py_ssize_t)) < 0) {
        *error = 1;
        return 0;
    }
    Py_ssize_t size = 4;
    while (size < 2 * n)
        size *= 2;
    Py_ssize_t *slots = PyMem_Malloc(size * sizeof(Py_ssize_t));
    if (!slots) {
        *error = 1;
        return 0;
    }
    for (Py_ssize_t i = 0; i < size; i++)
        slots[i] = -1;
    int found = 0;
    for (Py_ssize_t i = 0; i < n && !found; i++) {
        uint64_t h0, h1;
        memcpy(&h0, ids + 16 * i, 8);
        memcpy(&h1, ids + 16 * i + 8, 8);
        uint64_t h = (h0 ^ (h1 * 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL;
        Py_ssize_t j = (Py_ssize_t)((h >> 17) & (uint64_t)(size - 1));
        for (;; j = (j + 1) & (size - 1)) {
            if (slots[j] < 0) {
                slots[j] = i;
                break;
            }
            if (memcmp(ids + 16 * slots[j], ids + 16 * i, 16) == 0) {
                found = 1;
                break;
            }
        }
    }
    PyMem_Free(slots);
    return found;
}
static PyObject *
neighbours_json(PyObject *self, PyObject *args)
{
    PyObject *ids_obj, *scores_obj;
    const char *key = NULL;
    Py_ssize_t key_len = 0;
    if (!PyArg_ParseTuple(args, "OO|y#", &ids_obj, &scores_obj, &key, &key_len))
        return NULL;
    if (key && key_len != 16) {
        PyErr_SetString(PyExc_ValueError, "neighbours_json: a key of 16 bytes expected");
        return NULL;
    }
    Py_buffer ids;
    if (PyObject_GetBuffer(ids_obj, &ids, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    Arr sc;
    /* (scores at any address: a row merge_top_k handed back as it is) */
    if (get_arr(scores_obj, &sc, F64, IN_ANY, "scores") < 0) {
        PyBuffer_Release(&ids);
        release(&sc, 1);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = sc.n;
    /* (16 and 72 bytes a neighbour: sizes checked, as every size here) */
    if (size_mul(n, 72) < 0 || ids.len != 16 * n) {
        PyErr_SetString(PyExc_ValueError, "neighbours_json: 16 id bytes a score expected");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!isfinite(f64_at(sc.p, i))) {
            result = Py_NewRef(Py_None);
            goto done;
        }
    int error;
    if (has_repeats(ids.buf, n, &error)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (error) {
        PyErr_NoMemory();
        goto done;
    }
    /* '"' 36 '"' ": " score ", ": 42 bytes and the score (repr: at most 24);
     * the key's '"' 36 '"' TAB '{' and the '}': 41 */
    Py_ssize_t size = size_add(n * 72, key ? 41 : 0);  /* (n * 72 checked above) */
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "neighbours_json: too many neighbours");
        goto done;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size ? size : 1);
    if (!out)
        goto done;
    char *w = PyBytes_AS_STRING(out), *start = w;
    const unsigned char *id = ids.buf;
    if (key) {
        w = quoted_hex_uuid((const unsigned char *)key, w);
        *w++ = '\t';
        *w++ = '{';
    }
    for (Py_ssize_t i = 0; i < n; i++, id += 16) {
        if (i) {
            *w++ = ',';
            *w++ = ' ';
        }
        w = quoted_hex_uuid(id, w);
        *w++ = ':';
        *w++ = ' ';
        int len = format_score(f64_at(sc.p, i), w);
        if (len < 0) {
            Py_DECREF(out);
            goto done;
        }
        w += len;
    }
    if (key)
        *w++ = '}';
    if (_PyBytes_Resize(&out, w - start) == 0)
        result = out;  /* (else out is gone and the error set) */
done:
    PyBuffer_Release(&ids);
    release(&sc, 1);
    return result;
}

/*
 * parse_json_line(line bytes) -> (doc bytes, ids bytes, weights bytearray) or None
 *
 * The common JSON input line, parsed in one pass: {"id": "<uuid>",
 * "features": {"<uuid>": <number>, ...}} (the two keys in either order,
 * JSON's blanks anywhere between tokens and around the object, UUIDs in
 * their canonical 36-character form, numbers as JSON writes them).  The
 * vector's 16 id bytes, its features' 16 bytes each in input order and their
 * weights as float64 -- what mrjobs.parsing's own parser gives: numbers are
 * read by the function float() uses (correctly rounded), an integer as
 * float(int(...)) (so -0 is 0.0).  None for anything else -- another form of
 * UUID, an escape in a string, a byte beyond ASCII, another key, a weight
 * that is not finite, a malformed line --, which the caller parses the
 * general way, with its error messages.
 */
static inline const char *
skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static inline int
hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* a quoted canonical UUID at p into out (16 bytes); the end of the closing
 * quote, or NULL */
static const char *
quoted_uuid(const char *p, const char *end, unsigned char *out)
{
    if (end - p < 38 || p[0] != '"' || p[37] != '"')
        return NULL;
    p++;
    int b = 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (p[i] != '-')
                return NULL;
            continue;
        }
        int hi = hex_value(p[i]), lo = hex_value(p[i + 1]);
        if (hi < 0 || lo < 0)
            return NULL;
        out[b++] = (unsigned char)(hi << 4 | lo);
        i++;
    }
    return p + 37;
}

/* a JSON number at p: its double in *v (an integer's as float(int)); the
 * end of the number, or NULL (not a JSON number, or not finite) */
static const char *
json_number(const char *p, const char *end, double *v)
{
    const char *s = p;
    int integer = 1;
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return NULL;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (p < end && *p == '.') {
        integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    char buf[64];
    if (p - s >= (Py_ssize_t)sizeof(buf))
        return NULL;  /* long numbers: the general way */
    memcpy(buf, s, p - s);
    buf[p - s] = '\0';
    char *stop;
    double x = PyOS_string_to_double(buf, &stop, NULL);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (stop != buf + (p - s) || !isfinite(x))
        return NULL;
    if (integer && x == 0.0)
        x = 0.0;  /* int("-0") is 0 */
    *v = x;
    return p;
}

/* The common JSON line of view parsed into doc, *ids (16 bytes each) and *w
 * (n of them, PyMem buffers the caller frees): 1; 0 for any other line; -1
 * out of memory. */
static int
parse_common(const Py_buffer *view, unsigned char *doc, unsigned char **ids_out,
             double **w_out, Py_ssize_t *n_out)
{
    const char *p = view->buf, *end = p + view->len;
    unsigned char *ids = NULL;
    double *w = NULL;
    Py_ssize_t n = 0, cap = 0;
    int have_id = 0, have_features = 0, ok = 0;
    for (const char *q = p; q < end; q++)
        if ((unsigned char)*q >= 0x80)
            goto out;  /* UTF-8 beyond ASCII: the general way */
    p = skip_blank(p, end);
    if (p >= end || *p++ != '{')
        goto out;
    for (int key = 0; key < 2; key++) {
        p = skip_blank(p, end);
        if (key) {
            if (p >= end || *p++ != ',')
                goto out;
            p = skip_blank(p, end);
        }
        if (end - p >= 4 && memcmp(p, "\"id\"", 4) == 0 && !have_id) {
            p = skip_blank(p + 4, end);
            if (p >= end || *p++ != ':')
                goto out;
            p = quoted_uuid(skip_blank(p, end), end, doc);
            if (!p)
                goto out;
            have_id = 1;
        }
        else if (end - p >= 10 && memcmp(p, "\"features\"", 10) == 0 && !have_features) {
            p = skip_blank(p + 10, end);
            if (p >= end || *p++ != ':')
                goto out;
            p = skip_blank(p, end);
            if (p >= end || *p++ != '{')
                goto out;
            p = skip_blank(p, end);
            if (p < end && *p == '}')
                p++;
            else
                for (;;) {
                    if (n == cap) {
                        Py_ssize_t grown = cap ? 2 * cap : 64;
                        unsigned char *ni = PyMem_Realloc(ids, grown * 16);
                        if (!ni)
                            goto nomem;
                        ids = ni;
                        double *nw = PyMem_Realloc(w, grown * sizeof(double));
                        if (!nw)
                            goto nomem;
                        w = nw;
                        cap = grown;
                    }
                    p = quoted_uuid(p, end, ids + 16 * n);
                    if (!p)
                        goto out;
                    p = skip_blank(p, end);
                    if (p >= end || *p++ != ':')
                        goto out;
                    p = json_number(skip_blank(p, end), end, w + n);
                    if (!p)
                        goto out;
                    n++;
                    p = skip_blank(p, end);
                    if (p < end && *p == ',') {
                        p = skip_blank(p + 1, end);
                        continue;
                    }
                    if (p < end && *p == '}') {
                        p++;
                        break;
                    }
                    goto out;
                }
            have_features = 1;
        }
        else
            goto out;
    }
    p = skip_blank(p, end);
    if (p >= end || *p++ != '}')
        goto out;
    if (skip_blank(p, end) != end)
        goto out;
    ok = 1;
out:
    *ids_out = ids;
    *w_out = w;
    *n_out = n;
    return ok;
nomem:
    *ids_out = ids;
    *w_out = w;
    *n_out = 0;
    return -1;
}

typedef struct {
    unsigned char id[16];
    double w;
} Entry;

static int
entry_cmp(const void *x, const void *y)
{
    return memcmp(((const Entry *)x)->id, ((const Entry *)y)->id, 16);
}

/*
 * A parsed line's features in UUID order, in place: 1; 0 if the line needs
 * more than that (no feature, one twice, a weight 0), -1 out of memory.
 */
static int
sort_features(unsigned char *ids, double *w, Py_ssize_t n)
{
    if (n < 1)
        return 0;
    Entry *e = PyMem_Malloc(n * sizeof(Entry));
    if (!e)
        return -1;
    int ok = 1;
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        ok = w[i] != 0.0;
        memcpy(e[i].id, ids + 16 * i, 16);
        e[i].w = w[i];
    }
    if (ok)
        qsort(e, n, sizeof(Entry), entry_cmp);
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        ok = !(i && memcmp(e[i - 1].id, e[i].id, 16) == 0);
        memcpy(ids + 16 * i, e[i].id, 16);
        w[i] = e[i].w;
    }
    PyMem_Free(e);
    return ok;
}

/* parse_json_line (sort 0) and parse_json_sorted (sort 1) */
static PyObject *
parse_line(PyObject *arg, int sort)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    unsigned char doc[16], *ids;
    double *w;
    Py_ssize_t n;
    int ok = parse_common(&view, doc, &ids, &w, &n);
    if (ok > 0 && sort)
        ok = sort_features(ids, w, n);
    PyObject *result = NULL;
    if (ok < 0)
        PyErr_NoMemory();
    else if (!ok)
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("(y#y#N)", (const char *)doc, (Py_ssize_t)16,
                               (const char *)(ids ? (const char *)ids : ""), 16 * n,
                               PyByteArray_FromStringAndSize((const char *)w,
                                                             n * (Py_ssize_t)sizeof(double)));
    PyMem_Free(ids);
    PyMem_Free(w);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *
parse_json_line(PyObject *self, PyObject *arg)
{
    return parse_line(arg, 0);
}

/*
 * parse_json_sorted(line bytes) -> (doc bytes, ids bytes, weights bytearray) or None
 *
 * parse_json_line, then the features in UUID order, for a line that needs no
 * more than that: at least one feature, none twice, no weight 0.  Such a
 * line's vector is the one the jobs make of it (sorted, repeats summed, zeros
 * dropped: here nothing to sum or drop); None for any other line.
 */
static PyObject *
parse_json_sorted(PyObject *self, PyObject *arg)
{
    return parse_line(arg, 1);
}

static PyObject *
avx2(PyObject *self, PyObject *args)
{
    int on = -1;
    if (!PyArg_ParseTuple(args, "|p", &on))
        return NULL;
#ifdef HAVE_AVX2_LOUD
    if (on >= 0)
        have_avx2 = on && cpu_has_avx2();
#endif
    return PyBool_FromLong(have_avx2);
}

static PyMethodDef methods[] = {
    {"neighbours_json", neighbours_json, METH_VARARGS,
     "neighbours_json(ids, scores[, key]) -> the JSON body of an output line's neighbours "
     "(with key: the whole line)."},
    {"dots", dots, METH_VARARGS,
     "dots(a_indptr, a_indices, a_data, bt_indptr, bt_indices, bt_data, n_c, r0, r1, mode, "
     "out_r, out_c, out_d) -> pairs written, or -1 if they do not fit."},
    {"merge_top_k", merge_top_k, METH_VARARGS,
     "merge_top_k(ids, scores, k) -> (ids, scores) of a row's k best from its pieces, or None."},
    {"top_k_rows", top_k_rows, METH_VARARGS,
     "top_k_rows(groups, others, scores, k, out_g, out_o, out_s) -> entries written."},
    {"kept_offer", kept_offer, METH_VARARGS,
     "kept_offer(groups, others, scores, skip_self, k, cap, ks, ko, kn, floor)."},
    {"pair_topk", pair_topk, METH_VARARGS,
     "pair_topk(a_indptr, a_indices, a_data, bt_indptr, bt_indices, bt_data, n_c, r0, r1, "
     "mode, k, kind, threshold, limit, mirror, k_c, cap, ks, ko, kn, floor, merge, counts[, "
     "zero_free, seeds]) "
     "-> (groups, others, scores) as bytes."},
    {"parse_json_line", parse_json_line, METH_O,
     "parse_json_line(line) -> (doc, ids, weights) of the common JSON input line, or None."},
    {"parse_json_sorted", parse_json_sorted, METH_O,
     "parse_json_sorted(line) -> (doc, ids, weights) of a common JSON input line that needs "
     "only sorting, sorted; or None."},
    {"repr_floats", repr_floats, METH_O,
     "repr_floats(scores) -> [repr(score), ...], as the JSON output writes them."},
    {"avx2", avx2, METH_VARARGS,
     "avx2([on]) -> whether the kernels' AVX2 paths run; with on, turned on (where the "
     "processor has AVX2) or off first, for the tests."},
    {"kept_take", kept_take, METH_VARARGS,
     "kept_take(k, ks, ko, kn, out_g, out_o, out_s) -> entries written."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mrjobs_speedups",
    "C kernels of mrjobs (the block pair's product and top-k, the JSON output).", -1, methods
};

PyMODINIT_FUNC
PyInit__mrjobs_speedups(void)
{
    if (ryu_tables() < 0)
        return NULL;
#ifdef HAVE_AVX2_LOUD
    have_avx2 = cpu_has_avx2();
#endif
    return PyModule_Create(&module);
}
