/*
 * The block pair's product: dots() writes every pair out; topk_row_sums
 * sums a row for pair_topk (topk.c), densely where the row is long.
 *
 * dots() is Gustavson's row-by-row product, as scipy's csr_matmat computes
 * it: a row's products are summed in the order of the row's stored entries,
 * starting from 0.0, one multiply and one add at a time (built without
 * floating-point contraction: no fused multiply-add), so every dot product
 * is the same double scipy gives.  Unlike scipy it keeps pairs whose sum is
 * exactly 0.0 (they share a feature) and, on a diagonal block, visits only
 * the columns above the diagonal.
 */
#include "kernel.h"

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

/* dots()' work: a row's sums (acc), the columns it touched (in order), and
 * the last row (counted from r0) that touched each column; in modes 1 and
 * 2, the features whose columns were found ascending */
typedef struct {
    double *acc;
    int32_t *mark, *touched;
    unsigned char *sorted;
} Sums;

/* d's buffers for n_c columns and n_f features; -1 out of memory (the
 * error set) */
static int
sums_alloc(Sums *d, Py_ssize_t n_c, Py_ssize_t n_f, int mode)
{
    if (n_c) {
        d->acc = malloc(n_c * sizeof(double));
        d->mark = malloc(n_c * sizeof(int32_t));
        d->touched = malloc(n_c * sizeof(int32_t));
        if (!d->acc || !d->mark || !d->touched) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t c = 0; c < n_c; c++)
            d->mark[c] = -1;
    }
    if (mode && n_f) {
        /* calloc: the pages of features no row meets are never touched */
        d->sorted = calloc(n_f, 1);
        if (!d->sorted) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* The pairs of rows r0..r1-1 (dots(): a[0..5] the block, a[6..8] the
 * outputs): how many were written, -1 when they do not fit, -2 (*why set)
 * when the block is malformed */
static Py_ssize_t
dots_rows(const Arr *a, Sums *d, Py_ssize_t n_c, Py_ssize_t r0, Py_ssize_t r1, int mode,
          const char **why)
{
    const int64_t *ap = I64P(a[0]), *bp = I64P(a[3]);
    const int32_t *ai = I32P(a[1]), *bi = I32P(a[4]);
    const double *ad = F64P(a[2]), *bd = F64P(a[5]);
    int64_t *out_r = I64P(a[6]), *out_c = I64P(a[7]);
    double *out_d = F64P(a[8]);
    Py_ssize_t cap = a[6].n < a[7].n ? a[6].n : a[7].n;
    if (a[8].n < cap)
        cap = a[8].n;
    Py_ssize_t n = 0, n_f = a[3].n - 1;
    for (Py_ssize_t r = r0; r < r1; r++) {
        int64_t lo = mode == 0 ? 0 : (mode == 1 ? r + 1 : r);
        Py_ssize_t m = row_sums(ap, ai, ad, a[1].n, bp, bi, bd, a[4].n, n_f, n_c, r, lo,
                                (int32_t)(r - r0), d->sorted, d->acc, d->mark, d->touched,
                                why);
        if (m < 0)
            return -2;
        if (n + m > cap)
            return -1;
        for (Py_ssize_t t = 0; t < m; t++) {
            int64_t c = d->touched[t];
            out_r[n] = r;
            out_c[n] = c;
            out_d[n] = d->acc[c];
            n++;
        }
    }
    return n;
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
PyObject *
dots(PyObject *self, PyObject *args)
{
    PyObject *o[9];
    Py_ssize_t n_c, r0, r1;
    int mode;
    if (!PyArg_ParseTuple(args, "OOOOOOnnniOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &n_c, &r0, &r1, &mode, &o[6], &o[7], &o[8]))
        return NULL;
    Arr a[9];
    static const int kinds[9] = {I64, I32, F64, I64, I32, F64, I64, I64, F64};
    static const char *const names[9] = {"a_indptr", "a_indices", "a_data", "bt_indptr",
                                         "bt_indices", "bt_data", "out_r", "out_c", "out_d"};
    if (get_arrs(o, a, 9, kinds, names, 6) < 0)
        return NULL;
    Py_ssize_t n_f = a[3].n - 1;
    if (r0 < 0 || r1 < r0 || r1 >= a[0].n || n_c < 0 || n_f < 0 || mode < 0 || mode > 2
        || a[1].n != a[2].n || a[4].n != a[5].n) {
        release(a, 9);
        return bad("shapes");
    }
    if (r1 - r0 >= INT32_MAX || n_c >= INT32_MAX
        || size_mul(n_c, (Py_ssize_t)sizeof(double)) < 0) {
        release(a, 9);
        return bad("a chunk or block too large");
    }
    PyObject *result = NULL;
    Sums d = {NULL, NULL, NULL, NULL};
    if (sums_alloc(&d, n_c, n_f, mode) == 0) {
        const char *why = "an index out of range";
        Py_ssize_t n;
        Py_BEGIN_ALLOW_THREADS
        n = dots_rows(a, &d, n_c, r0, r1, mode, &why);
        Py_END_ALLOW_THREADS
        result = n == -2 ? bad(why) : PyLong_FromSsize_t(n);
    }
    free(d.acc);
    free(d.mark);
    free(d.touched);
    free(d.sorted);
    release(a, 9);
    return result;
}

/* pair_topk's row sums (topk_row_sums): dense from a walk of
 * (n_c - lo) / DENSE_SPAN on, DENSE_CHUNK columns at a time; a heavy
 * feature holds a 1/HEAVY_SHARE of the columns, their dense rows up to
 * HEAVY_BYTES */
#define DENSE_SPAN 2
#define DENSE_CHUNK 2048
#define HEAVY_SHARE 8
#define HEAVY_BYTES (32 << 20)

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

/* The heavy features' dense rows (w->heavy, H, P), up to HEAVY_BYTES; a
 * feature with an index out of range or a column twice is left out (its
 * walk finds the index).  0, or -1 when out of memory. */
int
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

/* Feature f's columns [ks, ke) checked, once a call (w->checked[f]: 1 in
 * range and ascending, 2 in range only): 0, or -1 (an index out of range;
 * *why set where they do not ascend in modes 1 to 3) */
static inline int
check_feature(Rows *w, int32_t f, int64_t ks, int64_t ke, const char **why)
{
    const int32_t *bi = w->bi;
    w->checked[f] = 1;
    for (int64_t kk = ks; kk < ke; kk++) {
        if (bi[kk] < 0 || bi[kk] >= w->n_c)
            return -1;
        if (kk > ks && bi[kk] < bi[kk - 1])
            w->checked[f] = 2;
    }
    if (w->mode && w->checked[f] == 2) {
        *why = "a feature's columns (bt_indices) not ascending";
        return -1;
    }
    return 0;
}

/* topk_row_sums' first pass over the row's entries [s, e): each feature
 * checked, the first column >= lo of its walk in w->starts (a binary
 * search), *ascending cleared where a feature that is not heavy has
 * columns out of order; the walks' length in all, or -1 (*why set) */
static inline int64_t
walk_starts(Rows *w, int64_t s, int64_t e, int64_t lo, int *ascending, const char **why)
{
    const int64_t *bp = w->bp;
    const int32_t *bi = w->bi;
    int64_t est = 0;
    for (int64_t jj = s; jj < e; jj++) {
        int32_t f = w->ai[jj];
        if (f < 0 || f >= w->n_f)
            return -1;
        int64_t ks = bp[f], ke = bp[f + 1];
        if (ks < 0 || ke < ks || ke > w->n_b)
            return -1;
        if (!w->checked[f] && check_feature(w, f, ks, ke, why) < 0)
            return -1;
        if (w->checked[f] == 2 && !(w->heavy && w->heavy[f] >= 0))
            *ascending = 0;
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
        w->starts[jj - s] = ks;
        est += ke - ks;
    }
    return est;
}

/* The row's entries [s, e) summed densely into acc (and hit) over [lo, n_c),
 * DENSE_CHUNK columns at a time */
static inline void
dense_sums(Rows *w, int64_t s, int64_t e, int64_t lo)
{
    const int64_t *bp = w->bp;
    const int32_t *ai = w->ai, *bi = w->bi;
    const double *ad = w->ad, *bd = w->bd;
    Py_ssize_t n_c = w->n_c;
    int64_t *starts = w->starts;
    double *acc = w->acc;
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
}

/* The row's entries [s, e) summed into acc, each column reached listed once
 * in touched (in the order first reached, marked with row); how many */
static inline Py_ssize_t
sparse_sums(Rows *w, int64_t s, int64_t e, int32_t row)
{
    const int64_t *bp = w->bp;
    const int32_t *ai = w->ai, *bi = w->bi;
    const double *ad = w->ad, *bd = w->bd;
    double *acc = w->acc;
    int32_t *mark = w->mark, *touched = w->touched;
    Py_ssize_t m = 0;
    for (int64_t jj = s; jj < e; jj++) {
        double v = ad[jj];
        int64_t ke = bp[ai[jj] + 1];
        for (int64_t kk = w->starts[jj - s]; kk < ke; kk++) {
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
Py_ssize_t
topk_row_sums(Rows *w, Py_ssize_t r, int64_t lo, int32_t row, int *dense, const char **why)
{
    int64_t s = w->ap[r], e = w->ap[r + 1];
    if (s < 0 || e < s || e > w->n_a)
        return -1;
    int ascending = 1;
    int64_t est = walk_starts(w, s, e, lo, &ascending, why);
    if (est < 0)
        return -1;
    *dense = ascending && est > 0 && est * DENSE_SPAN >= w->n_c - lo;
    if (*dense) {
        dense_sums(w, s, e, lo);
        return 0;
    }
    return sparse_sums(w, s, e, row);
}
