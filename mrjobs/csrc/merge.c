/*
 * merge_top_k: a vector's row in the rows step, from its pieces (each a
 * block pair's best for the vector), by the quickselect and the quicksort
 * of select.c over the row's candidates.
 */
#include "select.h"

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
cand_partition(void *items, Py_ssize_t lo, Py_ssize_t hi, uint64_t *seed)
{
    Cand *c = items;
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

static void
cand_insertion(void *items, Py_ssize_t lo, Py_ssize_t n)
{
    Cand *c = (Cand *)items + lo;
    for (Py_ssize_t i = 1; i < n; i++) {
        Cand v = c[i];
        Py_ssize_t j = i;
        for (; j > 0 && cand_before(&v, &c[j - 1]); j--)
            c[j] = c[j - 1];
        c[j] = v;
    }
}

/* cand_before's order */
static const Order CAND = {cand_partition, cand_insertion};

/* The buffers of the pieces (ids_l[i]: views[2 i], sc_l[i]: views[2 i + 1])
 * and their entries in *n; -1 with an error set.  *got: the pieces whose two
 * buffers are held (to release). */
static int
piece_views(PyObject *ids_l, PyObject *sc_l, Py_buffer *views, Py_ssize_t *got,
            Py_ssize_t *n)
{
    Py_ssize_t np_ = PyList_GET_SIZE(ids_l);
    for (*got = 0, *n = 0; *got < np_; ++*got) {
        Py_ssize_t i = *got;
        Py_buffer *vi = &views[2 * i], *vs = &views[2 * i + 1];
        if (PyObject_GetBuffer(PyList_GET_ITEM(ids_l, i), vi, PyBUF_SIMPLE) < 0)
            return -1;
        if (PyObject_GetBuffer(PyList_GET_ITEM(sc_l, i), vs, PyBUF_SIMPLE) < 0) {
            PyBuffer_Release(vi);
            return -1;
        }
        if (vi->len % 16 || vs->len % 8 || vi->len / 16 != vs->len / 8) {
            ++*got;
            bad("merge_top_k: a piece's ids and scores differ in length");
            return -1;
        }
        *n += vs->len / 8;
    }
    return 0;
}

/* The entries of the np_ pieces as candidates in c; whether a score is NaN */
static int
piece_cands(const Py_buffer *views, Py_ssize_t np_, Cand *c)
{
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
    return nan;
}

/* The first kept of the n candidates in order at the front of c, unless all
 * n are in order already (a whole row from pair_topk's mode 3, one piece):
 * whether they were */
static int
order_cands(Cand *c, Py_ssize_t n, Py_ssize_t kept)
{
    uint64_t seed = SEED;
    int ordered = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 1; i < n && ordered; i++)
        ordered = cand_before(&c[i - 1], &c[i]);
    if (!ordered) {
        quickselect(c, n, kept, &CAND, &seed);
        quicksort(c, 0, kept, &CAND, &seed);
    }
    Py_END_ALLOW_THREADS
    return ordered;
}

/* (ids bytes, scores bytes) of the first kept candidates */
static PyObject *
row_bytes(const Cand *c, Py_ssize_t kept)
{
    PyObject *result = NULL;
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
    return result;
}

/*
 * merge_top_k(ids list, scores list, k) -> (ids bytes, scores bytes) or None
 *
 * A vector's row from its pieces (piece i: ids[i], 16 bytes an entry, and
 * scores[i], float64): its k best entries, score descending, ties by id
 * (bytes) ascending -- the row mrjobs.scoring.merge_rows makes, found in O(entries + k log k) without
 * gathering the pieces in numpy first (entries already in that order:
 * O(entries); one such piece of at most k entries comes back itself, the
 * two objects given, not bytes).  None when a score is NaN (the caller
 * orders those its own way).
 */
PyObject *
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
    if (piece_views(ids_l, sc_l, views, &got, &n) < 0)
        goto done;
    c = PyMem_Malloc((n ? n : 1) * sizeof(Cand));
    if (!c) {
        PyErr_NoMemory();
        goto done;
    }
    if (piece_cands(views, np_, c)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t kept = k < n ? k : n;
    /* (in order, one piece of at most k entries: the piece itself is the row, not copied) */
    if (order_cands(c, n, kept) && np_ == 1 && kept == n)
        result = PyTuple_Pack(2, PyList_GET_ITEM(ids_l, 0), PyList_GET_ITEM(sc_l, 0));
    else
        result = row_bytes(c, kept);
done:
    for (Py_ssize_t i = 0; i < got; i++) {
        PyBuffer_Release(&views[2 * i]);
        PyBuffer_Release(&views[2 * i + 1]);
    }
    PyMem_Free(views);
    PyMem_Free(c);
    return result;
}
