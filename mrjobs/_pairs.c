/*
 * Optional C kernels of mrjobs.pairs: the block pair's sparse product and its
 * top-k selection, in both directions.
 *
 * Built as the top-level module ``_mrsparse_pairs`` (like _mrcodecs_speedups).
 * mrjobs.pairs uses it when it is importable and falls back to its numpy
 * path otherwise; both give the same pairs, the same dot products to the
 * bit, and the same selections (tests/test_pairs.py runs every case on both).
 *
 * dots() is Gustavson's row-by-row product, as scipy's csr_matmat computes
 * it: a row's products are summed in the order of the row's stored entries,
 * starting from 0.0, one multiply and one add at a time (built without
 * floating-point contraction: no fused multiply-add), so every dot product
 * is the same double scipy gives.  Unlike scipy it keeps pairs whose sum is
 * exactly 0.0 (they share a feature) and, on a diagonal block, visits only
 * the columns above the diagonal.
 *
 * The selections order entries by score descending, ties by the smaller
 * other index -- the order of mrjobs.kernels.top_k_groups.  Scores are
 * finite (the scorer drops the others before selection).
 *
 * Arrays come through the buffer protocol: C-contiguous, int64 (q), int32
 * (i) or float64 (d) as each function says; every index read is checked
 * against the array it indexes, so malformed input raises ValueError rather
 * than reading out of bounds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* setup.py also passes -ffp-contract=off */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

typedef struct {
    Py_buffer view;
    Py_ssize_t n;
    int held;
} Arr;

static const char *const FORMATS[] = {"q", "i", "d"};
enum { I64 = 0, I32 = 1, F64 = 2 };

static int
get_arr(PyObject *obj, Arr *a, int kind, int writable, const char *name)
{
    Py_ssize_t size = kind == I32 ? 4 : 8;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    a->held = 0;
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
    return 0;
}

static void
release(Arr *arrs, int n)
{
    for (int i = 0; i < n; i++)
        if (arrs[i].held)
            PyBuffer_Release(&arrs[i].view);
}

#define I64P(a) ((int64_t *)(a).view.buf)
#define I32P(a) ((int32_t *)(a).view.buf)
#define F64P(a) ((double *)(a).view.buf)

static PyObject *
bad(const char *what)
{
    PyErr_Format(PyExc_ValueError, "malformed block: %s", what);
    return NULL;
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
        if (get_arr(o[i], &a[i], kinds[i], i >= 6, names[i]) < 0) {
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
    double *acc = NULL;
    int64_t *mark = NULL, *touched = NULL;
    if (n_c) {
        acc = malloc(n_c * sizeof(double));
        mark = malloc(n_c * sizeof(int64_t));
        touched = malloc(n_c * sizeof(int64_t));
        if (!acc || !mark || !touched) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t c = 0; c < n_c; c++)
            mark[c] = -1;
    }
    Py_ssize_t n = 0;
    int fits = 1, ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = r0; r < r1 && ok && fits; r++) {
        int64_t lo = mode == 0 ? 0 : (mode == 1 ? r + 1 : r);
        int64_t s = ap[r], e = ap[r + 1];
        if (s < 0 || e < s || e > a[1].n) {
            ok = 0;
            break;
        }
        Py_ssize_t m = 0;
        for (int64_t jj = s; jj < e; jj++) {
            int32_t f = ai[jj];
            if (f < 0 || f >= n_f) {
                ok = 0;
                break;
            }
            double v = ad[jj];
            int64_t ks = bp[f], ke = bp[f + 1];
            if (ks < 0 || ke < ks || ke > a[4].n) {
                ok = 0;
                break;
            }
            /* columns ascending: walk down from the last, stop below lo */
            for (int64_t kk = ke - 1; kk >= ks; kk--) {
                int64_t c = bi[kk];
                if (c < lo)
                    break;
                if (c >= n_c) {
                    ok = 0;
                    break;
                }
                if (mark[c] != r) {
                    mark[c] = r;
                    acc[c] = 0.0;
                    touched[m++] = c;
                }
                acc[c] += v * bd[kk];
            }
            if (!ok)
                break;
        }
        if (!ok)
            break;
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
        bad("an index out of range");
    else
        result = PyLong_FromSsize_t(fits ? n : -1);
done:
    free(acc);
    free(mark);
    free(touched);
    release(a, 9);
    return result;
}

/* entry x is worse than entry y: lower score, or the same score and a larger
 * other index */
static inline int
worse(double sx, int64_t ox, double sy, int64_t oy)
{
    return sx < sy || (sx == sy && ox > oy);
}

/* Sift down in a heap whose root is its worst entry (scores s, others o). */
static inline void
sift_down(double *s, int64_t *o, Py_ssize_t n, Py_ssize_t i)
{
    double si = s[i];
    int64_t oi = o[i];
    for (;;) {
        Py_ssize_t l = 2 * i + 1;
        if (l >= n)
            break;
        Py_ssize_t w = l;
        if (l + 1 < n && worse(s[l + 1], o[l + 1], s[l], o[l]))
            w = l + 1;
        if (!worse(s[w], o[w], si, oi))
            break;
        s[i] = s[w];
        o[i] = o[w];
        i = w;
    }
    s[i] = si;
    o[i] = oi;
}

static inline void
sift_up(double *s, int64_t *o, Py_ssize_t i)
{
    double si = s[i];
    int64_t oi = o[i];
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!worse(si, oi, s[p], o[p]))
            break;
        s[i] = s[p];
        o[i] = o[p];
        i = p;
    }
    s[i] = si;
    o[i] = oi;
}

/* Offer (score, other) to a heap of at most k (root: the worst kept). */
static inline void
offer(double *s, int64_t *o, int64_t *n, Py_ssize_t k, double sc, int64_t ot)
{
    if (*n < k) {
        s[*n] = sc;
        o[*n] = ot;
        sift_up(s, o, (*n)++);
    } else if (worse(s[0], o[0], sc, ot)) {
        s[0] = sc;
        o[0] = ot;
        sift_down(s, o, k, 0);
    }
}

/* Heapsort a heap in place: the worst goes last, then the next worst before
 * it, and so on: best first. */
static inline void
heap_sorted(double *s, int64_t *o, Py_ssize_t n)
{
    for (Py_ssize_t end = n - 1; end > 0; end--) {
        double ts = s[0];
        int64_t to = o[0];
        s[0] = s[end];
        o[0] = o[end];
        s[end] = ts;
        o[end] = to;
        sift_down(s, o, end, 0);
    }
}

/*
 * top_k_rows(groups q, others q, scores d, k, out_g q, out_o q, out_s d) -> int
 *
 * Entries grouped by group (each group's entries contiguous): each group's k
 * best, best first, groups in the order they come; returns how many were
 * written.  The outputs hold at least as many entries as the input.
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
        if (get_arr(o[i], &a[i], kinds[i], i >= 3, names[i]) < 0) {
            release(a, 6);
            return NULL;
        }
    Py_ssize_t n = a[0].n;
    if (k < 1 || a[1].n != n || a[2].n != n || a[3].n < n || a[4].n < n || a[5].n < n) {
        release(a, 6);
        return bad("top_k_rows: shapes");
    }
    const int64_t *g = I64P(a[0]), *ot = I64P(a[1]);
    const double *sc = F64P(a[2]);
    int64_t *og = I64P(a[3]), *oo = I64P(a[4]);
    double *os = F64P(a[5]);
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t s = 0;
    while (s < n) {
        Py_ssize_t e = s + 1;
        while (e < n && g[e] == g[s])
            e++;
        /* the heap lives in the output, at this group's place */
        int64_t h = 0;
        for (Py_ssize_t t = s; t < e; t++)
            offer(os + m, oo + m, &h, k, sc[t], ot[t]);
        heap_sorted(os + m, oo + m, h);
        for (int64_t t = 0; t < h; t++)
            og[m + t] = g[s];
        m += h;
        s = e;
    }
    Py_END_ALLOW_THREADS
    release(a, 6);
    return PyLong_FromSsize_t(m);
}

/*
 * heaps_offer(groups q, others q, scores d, skip_self, k, hs d, ho q, hn q)
 *
 * Offer each entry to its group's heap of at most k (group g's heap is
 * hs[g*k:(g+1)*k], ho[...], hn[g] entries); with skip_self, entries whose
 * group equals their other are left out.
 */
static PyObject *
heaps_offer(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    int skip_self;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOpnOOO", &o[0], &o[1], &o[2], &skip_self, &k, &o[3],
                          &o[4], &o[5]))
        return NULL;
    Arr a[6];
    memset(a, 0, sizeof(a));
    static const int kinds[6] = {I64, I64, F64, F64, I64, I64};
    static const char *const names[6] = {"groups", "others", "scores", "hs", "ho", "hn"};
    for (int i = 0; i < 6; i++)
        if (get_arr(o[i], &a[i], kinds[i], i >= 3, names[i]) < 0) {
            release(a, 6);
            return NULL;
        }
    Py_ssize_t n = a[0].n, n_g = a[5].n;
    if (k < 1 || a[1].n != n || a[2].n != n || a[3].n != n_g * k || a[4].n != n_g * k) {
        release(a, 6);
        return bad("heaps_offer: shapes");
    }
    const int64_t *g = I64P(a[0]), *ot = I64P(a[1]);
    const double *sc = F64P(a[2]);
    double *hs = F64P(a[3]);
    int64_t *ho = I64P(a[4]), *hn = I64P(a[5]);
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < n; t++) {
        int64_t c = g[t];
        if (c < 0 || c >= n_g) {
            ok = 0;
            break;
        }
        if (skip_self && c == ot[t])
            continue;
        offer(hs + c * k, ho + c * k, hn + c, k, sc[t], ot[t]);
    }
    Py_END_ALLOW_THREADS
    release(a, 6);
    if (!ok)
        return bad("heaps_offer: a group out of range");
    Py_RETURN_NONE;
}

/*
 * heaps_take(k, hs d, ho q, hn q, out_g q, out_o q, out_s d) -> int
 *
 * Every heap's entries, best first, groups ascending; returns how many (the
 * outputs hold at least sum(hn)).  The heaps are emptied (hn set to 0).
 */
static PyObject *
heaps_take(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "nOOOOOO", &k, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Arr a[6];
    memset(a, 0, sizeof(a));
    static const int kinds[6] = {F64, I64, I64, I64, I64, F64};
    static const char *const names[6] = {"hs", "ho", "hn", "out_g", "out_o", "out_s"};
    for (int i = 0; i < 6; i++)
        if (get_arr(o[i], &a[i], kinds[i], 1, names[i]) < 0) {
            release(a, 6);
            return NULL;
        }
    Py_ssize_t n_g = a[2].n;
    double *hs = F64P(a[0]), *os = F64P(a[5]);
    int64_t *ho = I64P(a[1]), *hn = I64P(a[2]), *og = I64P(a[3]), *oo = I64P(a[4]);
    Py_ssize_t total = 0;
    int ok = k >= 1 && a[0].n == n_g * k && a[1].n == n_g * k;
    for (Py_ssize_t c = 0; ok && c < n_g; c++) {
        ok = hn[c] >= 0 && hn[c] <= k;
        total += hn[c];
    }
    if (!ok || a[3].n < total || a[4].n < total || a[5].n < total) {
        release(a, 6);
        return bad("heaps_take: shapes");
    }
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < n_g; c++) {
        int64_t h = hn[c];
        heap_sorted(hs + c * k, ho + c * k, h);
        for (int64_t t = 0; t < h; t++) {
            og[m] = c;
            oo[m] = ho[c * k + t];
            os[m] = hs[c * k + t];
            m++;
        }
        hn[c] = 0;
    }
    Py_END_ALLOW_THREADS
    release(a, 6);
    return PyLong_FromSsize_t(m);
}

static PyMethodDef methods[] = {
    {"dots", dots, METH_VARARGS,
     "dots(a_indptr, a_indices, a_data, bt_indptr, bt_indices, bt_data, n_c, r0, r1, mode, "
     "out_r, out_c, out_d) -> pairs written, or -1 if they do not fit."},
    {"top_k_rows", top_k_rows, METH_VARARGS,
     "top_k_rows(groups, others, scores, k, out_g, out_o, out_s) -> entries written."},
    {"heaps_offer", heaps_offer, METH_VARARGS,
     "heaps_offer(groups, others, scores, skip_self, k, hs, ho, hn)."},
    {"heaps_take", heaps_take, METH_VARARGS,
     "heaps_take(k, hs, ho, hn, out_g, out_o, out_s) -> entries written."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mrsparse_pairs",
    "C kernels of mrjobs.pairs (the block pair's product and top-k).", -1, methods
};

PyMODINIT_FUNC
PyInit__mrsparse_pairs(void)
{
    return PyModule_Create(&module);
}
