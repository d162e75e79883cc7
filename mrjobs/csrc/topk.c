/*
 * pair_topk(*, a, bt, n_c, start, end, mode, k, kind, threshold, limit, counts q,
 *           kept=None, merge=False, zero_free=False, seeds=None)
 *     -> (groups bytes, others bytes, scores bytes)
 *
 * (keyword arguments only) a: (indptr q, indices i, data d) of the block's
 * rows; bt: the same of its columns, features x columns (Bt, each feature's
 * columns ascending); n_c: the columns; the rows start..end-1.
 *
 * dots(), scored and selected in one pass, with no pair written out: each
 * row's products are summed as dots() sums them (the same doubles), then
 * each is scored, checked and offered to the row's best and, with kept
 * (the mirror), to its column's kept buffer (as kept_offer keeps it: k_c
 * best in cap slots a column; kept = (k_c, cap, ks d, ko q, kn q, floor d),
 * the buffers of mrjobs.pairs.fused.Kept).  Each row's k best (in no set
 * order), rows ascending, as int64 groups and others and float64 scores
 * (bytes; the outputs grow as the rows fill them: a row writes at most
 * min(k, its candidates)).
 *
 * kind 0: the score is the dot product (measure "dot"); 1: the cosine of unit
 * weights (mrjobs.measures.scores.cosine: a sum beyond UNIT_LIMIT, or NaN, is
 * an error, as in Measure.score; then clamped to [-1, 1] and snapped to +-1
 * within UNIT_SNAP).  A score is kept when finite (limit == inf) or when
 * |score| <= limit (float32 on the wire), and when >= threshold (-inf: no
 * threshold).  counts[0..2] get the pairs scored, not finite and below the
 * threshold (the Scorer's counters); counts[3] the products.
 *
 * merge (a diagonal block, mode 1 or 2, with kept): row r's result also
 * holds its column buffer's entries -- the rows above it, which came before
 * it -- so that each vector's best over the whole block comes in one result;
 * the buffer is emptied.
 *
 * mode (as dots() takes it): 0 every column, 1 the columns after the row's
 * own (a diagonal block's upper triangle), 2 from the row's own on; 3 (one
 * block, without kept) every column but the row's own: whole rows, each
 * pair scored from both of its rows, so that rows can be run apart (on
 * threads) with no column buffer; each row's best come in their output
 * order (score descending, ties by smaller other), sorted on the caller's
 * thread.
 *
 * zero_free: where the caller found that no pair that shares a feature can
 * sum to exactly 0.0 (mrjobs.pairs.fused._zero_free: each side's weights
 * finite and of one sign, the product of their least magnitudes not 0.0).
 * Then a column is hit exactly where its sum is not 0.0, and the dense sums
 * keep no hit bytes (their writes and the heavy rows' or_bytes were a tenth
 * of a dense --top-k 100 run's time); the same results either way.
 * (Finite: a heavy row adds v * 0.0 to the columns it misses, NaN for an
 * infinite v.)
 *
 * seeds (modes 1 and 2 with kept, not merged, a diagonal block): n_c
 * doubles shared by the calls that run a block's chunks on threads, -inf at
 * first.  The rows are taken last to first; each row's k-th best is left in
 * seeds[r] (where it has k), and a column's floor is raised to its seed
 * before an offer to it (raise_to_seed): the same rows and counts, fewer
 * column offers.
 */
#include "kernel.h"
#include "select.h"

#define UNIT_LIMIT (1.0 + 0x1p-20)
#define UNIT_SNAP 0x1p-44

/* the arrays of a call: the block, the columns' buffers (kept), counts, seeds */
enum { KS = 6, KO, KN, FLOOR, COUNTS, SEEDS, N_ARRAYS };

/* A call of pair_topk: its options, the columns' buffers, its workspace,
 * its outputs and tallies */
typedef struct {
    Py_ssize_t n_c, r0, r1, k, k_r, rcap, k_c, cap;
    int mode, kind, mirror, merge, finite_only;
    double threshold, limit;
    /* [quiet_lo, quiet_hi]: the scores that pass every check unchanged (kind
     * 1: not snapped; in the limit; not below the threshold); such a score
     * below its row's floor and its column's changes nothing and is passed
     * over at once (the same counts, offers and errors) */
    double quiet_lo, quiet_hi;
    double *ks, *floor, *seeds;  /* the columns' buffers (mirror), seeds */
    int64_t *ko, *kn, *counts;
    Rows w;
    double *rs;  /* a row's buffer: rcap slots */
    int64_t *ro;
    Keyed *row_scratch;  /* mode 3: sort_row_best's */
    int64_t *out_g, *out_o;  /* the outputs, grown as rows fill them */
    double *out_s;
    Py_ssize_t out_cap, m;
    int64_t n, scored, not_finite, below;
    int unit_error, no_memory;  /* the errors: these, or why */
    double bad_sum;
    const char *why;
    uint64_t seed;
} Topk;

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

static char *KEYWORDS[] = {"a", "bt", "n_c", "start", "end", "mode", "k", "kind", "threshold",
                           "limit", "counts", "kept", "merge", "zero_free", "seeds", NULL};

/* pair_topk's arguments: the arrays' objects in o (NULL where not given),
 * the rest in t; -1 with an error set */
static int
topk_parse(PyObject *args, PyObject *kwargs, PyObject **o, Topk *t, int *zero_free)
{
    PyObject *kept = Py_None, *seeds = Py_None;
    if (PyTuple_GET_SIZE(args)) {
        PyErr_SetString(PyExc_TypeError, "pair_topk() takes keyword arguments only");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "(OOO)(OOO)nnniniddO|OppO:pair_topk", KEYWORDS, &o[0], &o[1], &o[2],
            &o[3], &o[4], &o[5], &t->n_c, &t->r0, &t->r1, &t->mode, &t->k, &t->kind,
            &t->threshold, &t->limit, &o[COUNTS], &kept, &t->merge, zero_free, &seeds))
        return -1;
    t->mirror = kept != Py_None;
    if (t->mirror && !PyTuple_Check(kept)) {
        PyErr_SetString(PyExc_TypeError, "pair_topk: kept: a tuple (k, cap, ks, ko, kn, "
                        "floor) expected");
        return -1;
    }
    if (t->mirror && !PyArg_ParseTuple(kept, "nnOOOO:pair_topk kept", &t->k_c, &t->cap, &o[KS],
                                       &o[KO], &o[KN], &o[FLOOR]))
        return -1;
    o[SEEDS] = seeds == Py_None ? NULL : seeds;
    return 0;
}

/* the arrays o given into a; -1 with an error set (and a released) */
static int
topk_arrays(PyObject *const *o, Arr *a)
{
    static const int kinds[N_ARRAYS] = {I64, I32, F64, I64, I32, F64,
                                        F64, I64, I64, F64, I64, F64};
    static const char *const names[N_ARRAYS] = {
        "a_indptr", "a_indices", "a_data", "bt_indptr", "bt_indices", "bt_data",
        "ks", "ko", "kn", "floor", "counts", "seeds"};
    memset(a, 0, N_ARRAYS * sizeof(Arr));
    for (int i = 0; i < N_ARRAYS; i++)
        if (o[i] && get_arr(o[i], &a[i], kinds[i], i >= KS ? OUT : IN, names[i]) < 0) {
            release(a, N_ARRAYS);
            return -1;
        }
    return 0;
}

/* what is wrong with a call's arrays a and options t, or NULL */
static const char *
topk_wrong(const Arr *a, const Topk *t)
{
    Py_ssize_t n_c = t->n_c, r0 = t->r0, r1 = t->r1, n_f = a[3].n - 1;
    int mode = t->mode;
    if (r0 < 0 || r1 < r0 || r1 >= a[0].n || n_c < 0 || n_f < 0 || mode < 0 || mode > 3
        || a[1].n != a[2].n || a[4].n != a[5].n || t->k < 1 || t->kind < 0 || t->kind > 1
        || a[COUNTS].n < 4 || r1 - r0 >= INT32_MAX || n_c >= INT32_MAX
        || size_mul(n_c, (Py_ssize_t)sizeof(double)) < 0)
        return "pair_topk: shapes";
    Py_ssize_t slots = t->mirror ? size_mul(n_c, t->cap) : 0;
    if (t->mirror && (t->k_c < 1 || t->cap <= t->k_c || slots < 0 || a[KS].n != slots
                      || a[KO].n != slots || a[KN].n != n_c || a[FLOOR].n != n_c))
        return "pair_topk: the columns' buffers";
    if (t->merge && (!t->mirror || mode == 0 || mode == 3 || r1 > n_c))
        return "pair_topk: merge needs a diagonal block and its mirror";
    if (mode == 3 && (t->mirror || r1 > n_c))
        return "pair_topk: whole rows (mode 3) need one block, without its mirror";
    if (a[SEEDS].held && (!t->mirror || t->merge || (mode != 1 && mode != 2) || r1 > n_c
                          || a[SEEDS].n != n_c))
        return "pair_topk: seeds need a diagonal block's triangle and its mirror, "
               "unmerged, a seed a column";
    return NULL;
}

/* t's arrays (a: checked), its row's buffer's size and its quiet range */
static void
topk_setup(Topk *t, const Arr *a)
{
    Py_ssize_t k = t->k, n_c = t->n_c;
    /* the row's candidates: at most n_c (distinct columns), so a k beyond
     * that keeps them all */
    t->k_r = k < n_c ? k : (n_c > 0 ? n_c : 1);
    t->rcap = t->k_r + (t->k_r > 16 ? t->k_r / 2 : 8);
    Rows w = {I64P(a[0]), I64P(a[3]), I32P(a[1]), I32P(a[4]), F64P(a[2]), F64P(a[5]),
              a[1].n, a[4].n, a[3].n - 1, n_c, t->mode};
    t->w = w;
    if (t->mirror) {
        t->ks = F64P(a[KS]);
        t->ko = I64P(a[KO]);
        t->kn = I64P(a[KN]);
        t->floor = F64P(a[FLOOR]);
    }
    t->counts = I64P(a[COUNTS]);
#if defined(__GNUC__)
    t->seeds = a[SEEDS].held ? F64P(a[SEEDS]) : NULL;
#else
    t->seeds = NULL;  /* (no atomic loads and stores: rows top-down, no seeds) */
#endif
    t->finite_only = t->limit == HUGE_VAL;
    t->quiet_lo = t->finite_only ? -DBL_MAX : -t->limit;
    t->quiet_hi = t->finite_only ? DBL_MAX : t->limit;
    if (t->kind == 1) {
        t->quiet_lo = fmax(t->quiet_lo, nextafter(UNIT_SNAP - 1.0, HUGE_VAL));
        t->quiet_hi = fmin(t->quiet_hi, nextafter(1.0 - UNIT_SNAP, -HUGE_VAL));
    }
    t->quiet_lo = fmax(t->quiet_lo, t->threshold);
    t->why = "an index out of range";
    t->seed = SEED;
}

/* t's workspace: 0, or -1 out of memory */
static int
topk_alloc(Topk *t, int zero_free)
{
    Rows *w = &t->w;
    Py_ssize_t n_c = t->n_c, rcap = t->rcap;
    /* the longest row's entries: where each of its walks starts */
    Py_ssize_t longest = 1;
    for (Py_ssize_t r = t->r0; r < t->r1; r++)
        if (w->ap[r] >= 0 && w->ap[r + 1] >= w->ap[r] && w->ap[r + 1] <= w->n_a
                && w->ap[r + 1] - w->ap[r] > longest)
            longest = (Py_ssize_t)(w->ap[r + 1] - w->ap[r]);
    w->starts = malloc(longest * sizeof(int64_t));
    w->checked = calloc(w->n_f ? w->n_f : 1, 1);
    if (!w->starts || !w->checked)
        return -1;
    if (!n_c)
        return 0;
    w->acc = malloc(n_c * sizeof(double));
    w->hit = zero_free ? NULL : malloc(n_c);  /* no hit bytes: see zero_free */
    w->mark = malloc(n_c * sizeof(int32_t));
    w->touched = malloc(n_c * sizeof(int32_t));
    t->rs = malloc(rcap * sizeof(double));
    t->ro = malloc(rcap * sizeof(int64_t));
    if (t->mode == 3)
        t->row_scratch = malloc(3 * rcap * sizeof(Keyed));
    if (!w->acc || (!w->hit && !zero_free) || !w->mark || !w->touched || !t->rs || !t->ro
            || (t->mode == 3 && !t->row_scratch) || heavy_rows(w) < 0)
        return -1;
    for (Py_ssize_t c = 0; c < n_c; c++)
        w->mark[c] = -1;
    return 0;
}

static void
topk_free(Topk *t)
{
    PyMem_RawFree(t->out_g);
    PyMem_RawFree(t->out_o);
    PyMem_RawFree(t->out_s);
    free(t->w.acc);
    free(t->w.hit);
    free(t->w.mark);
    free(t->w.touched);
    free(t->w.starts);
    free(t->w.checked);
    free(t->w.heavy);
    free(t->w.H);
    free(t->w.P);
    free(t->rs);
    free(t->ro);
    free(t->row_scratch);
}

/* kind 1's check of a sum *sc, as Measure.score's: beyond UNIT_LIMIT, or
 * NaN, an error (-1, in t); else snapped to +-1 within UNIT_SNAP */
ALWAYS_INLINE int
unit_score(Topk *t, double *sc)
{
    if (*sc > UNIT_LIMIT || *sc < -UNIT_LIMIT) {
        t->unit_error = 1;
        t->bad_sum = *sc;
        return -1;
    }
    if (*sc != *sc) {  /* as Measure.score: not a score of prepared vectors */
        t->unit_error = 2;
        return -1;
    }
    if (*sc >= 1.0 - UNIT_SNAP)
        *sc = 1.0;
    else if (*sc <= UNIT_SNAP - 1.0)
        *sc = -1.0;
    return 0;
}

/* Column c's sum sc in row r, loud (not quiet): scored (kind 1: checked),
 * counted where not finite or below the threshold, else offered to the
 * row's buffer (h entries, floor rfloor) and, with mirror, to column c's:
 * 0, or -1 with the error in t */
ALWAYS_INLINE int
offer_score(Topk *t, Py_ssize_t r, Py_ssize_t c, double sc, int64_t *h, double *rfloor,
            uint64_t *seed)
{
    if (t->kind == 1 && unit_score(t, &sc) < 0)
        return -1;
    if (t->finite_only ? !isfinite(sc) : !(fabs(sc) <= t->limit)) {
        t->not_finite++;
        return 0;
    }
    if (sc < t->threshold) {
        t->below++;
        return 0;
    }
    if (!(sc < *rfloor))
        buffer_offer(t->rs, t->ro, h, t->k_r, t->rcap, rfloor, sc, c, seed);
    if (t->mirror && !(sc < t->floor[c]) && (t->mode == 0 || c != r)) {
        Py_ssize_t cap = t->cap;
        if (t->kn[c] < 0 || t->kn[c] >= cap) {
            t->why = "pair_topk: a column's buffer count out of range";
            return -1;
        }
        buffer_offer(t->ks + c * cap, t->ko + c * cap, t->kn + c, t->k_c, cap, t->floor + c,
                     sc, r, seed);
    }
    return 0;
}

/* The row's next column after c: the next listed in touched (*i of nt),
 * or (dense) the next hit in [c + 1, n_c) -- after QUIET_RUN quiet columns
 * (c - loud) the quiet ones before it passed over (next_loud) and counted
 * in *quiet_hits; n_c, or -1 (listed), where there is none */
ALWAYS_INLINE Py_ssize_t
next_column(const Topk *t, Py_ssize_t c, Py_ssize_t loud, int dense, Py_ssize_t *i,
            Py_ssize_t nt, double rfloor, int64_t *quiet_hits)
{
    const double *acc = t->w.acc;
    const unsigned char *hit = t->w.hit;
    if (!dense)
        return *i < nt ? t->w.touched[(*i)++] : -1;
    if (c - loud >= QUIET_RUN)
        return next_loud(acc, hit, t->mirror ? t->floor : NULL, c + 1, t->n_c, rfloor,
                         t->quiet_lo, t->quiet_hi, quiet_hits);
    do
        c++;
    while (c < t->n_c && (hit ? !hit[c] : acc[c] == 0.0));
    return c;
}

/* The row r's columns -- listed in touched (nt of them), or (dense) hit in
 * [lo, n_c) -- scored, checked and offered (offer_score) to the row's
 * buffer (*h entries, floor *rfloor) and its columns': 0, or -1 with the
 * error in t */
static int
scan_row(Topk *t, Py_ssize_t r, int64_t lo, int dense, Py_ssize_t nt, int64_t *h,
         double *rfloor)
{
    const double *acc = t->w.acc, *floor = t->floor, ql = t->quiet_lo, qh = t->quiet_hi;
    const int mirror = t->mirror, whole = t->mode == 3;
    double rf = *rfloor;
    int64_t n = 0, quiet_hits = 0;
    uint64_t seed = t->seed;
    int error = 0;
    Py_ssize_t loud = lo - 1;  /* the last column that was not quiet */
    for (Py_ssize_t i = 0, c = lo - 1;;) {
        c = next_column(t, c, loud, dense, &i, nt, rf, &quiet_hits);
        if (c < 0 || c >= t->n_c)
            break;
        if (whole && !dense && c == r)
            continue;
        n++;
        double sc = acc[c];
        if (quiet(sc, rf, ql, qh, mirror ? floor[c] : HUGE_VAL))
            continue;
        if (t->seeds && raise_to_seed(t->floor + c, t->seeds + c)
                && quiet(sc, rf, ql, qh, floor[c]))
            continue;
        loud = c;
        if ((error = offer_score(t, r, c, sc, h, &rf, &seed)) < 0)
            break;
    }
    t->n += n + quiet_hits;
    t->scored += n + quiet_hits;
    t->seed = seed;
    *rfloor = rf;
    return error;
}

/* merge: row r's column buffer -- the rows above it, which came before it
 * -- offered to the row's buffer (*h entries, floor *rfloor) and emptied:
 * 0, or -1 with the error in t */
static int
merge_column(Topk *t, Py_ssize_t r, int64_t *h, double *rfloor)
{
    int64_t held = t->kn[r];
    if (held < 0 || held >= t->cap) {
        t->why = "pair_topk: a column's buffer count out of range";
        return -1;
    }
    for (int64_t i = 0; i < held; i++) {
        double sc = t->ks[r * t->cap + i];
        if (!(sc < *rfloor))
            buffer_offer(t->rs, t->ro, h, t->k_r, t->rcap, rfloor, sc, t->ko[r * t->cap + i],
                         &t->seed);
    }
    t->kn[r] = 0;
    t->floor[r] = -HUGE_VAL;
    return 0;
}

/* row r's h best (rs, ro) appended to the outputs, grown as they fill: 0,
 * or -1 out of memory (no_memory) */
static int
append_row(Topk *t, Py_ssize_t r, int64_t h)
{
    if (t->m + h > t->out_cap) {
        Py_ssize_t grown = t->out_cap ? t->out_cap : 1024;
        while (grown >= 0 && grown < t->m + h)
            grown = size_mul(grown, 2) < 0 ? -1 : 2 * grown;
        int64_t *g2 = grown < 0 ? NULL : PyMem_RawRealloc(t->out_g, grown * sizeof(int64_t));
        if (g2)
            t->out_g = g2;
        int64_t *o2 = g2 ? PyMem_RawRealloc(t->out_o, grown * sizeof(int64_t)) : NULL;
        if (o2)
            t->out_o = o2;
        double *s2 = o2 ? PyMem_RawRealloc(t->out_s, grown * sizeof(double)) : NULL;
        if (!s2) {
            t->no_memory = 1;
            return -1;
        }
        t->out_s = s2;
        t->out_cap = grown;
    }
    for (int64_t i = 0; i < h; i++) {
        t->out_g[t->m] = r;
        t->out_o[t->m] = t->ro[i];
        t->out_s[t->m] = t->rs[i];
        t->m++;
    }
    return 0;
}

/* Row r (the row-th of the call): summed, scanned, merged, its k best
 * selected and appended to the outputs: 0, or -1 with the error in t */
static int
topk_row(Topk *t, Py_ssize_t r, int32_t row)
{
    int64_t lo = t->mode == 1 ? r + 1 : (t->mode == 2 ? r : 0);
    int dense = 0;
    Py_ssize_t nt = topk_row_sums(&t->w, r, lo, row, &dense, &t->why);
    if (nt < 0)
        return -1;
    double *acc = t->w.acc;
    if (t->mode == 3 && dense) {  /* the row itself: as a column it never reached */
        acc[r] = 0.0;
        if (t->w.hit)
            t->w.hit[r] = 0;
    }
    int64_t h = 0;
    double rfloor = dense && t->k_r >= FIRST_FLOOR_K
                        ? first_floor(acc, t->w.hit, lo, t->n_c, t->k_r, t->quiet_lo,
                                      t->quiet_hi)
                        : -HUGE_VAL;
    if (dense && rfloor > -HUGE_VAL) {  /* few loud columns: listed, then walked */
        int64_t quiet_hits = 0;
        nt = loud_columns(acc, t->w.hit, t->mirror ? t->floor : NULL, lo, t->n_c, rfloor,
                          t->quiet_lo, t->quiet_hi, t->w.touched, &quiet_hits);
        t->n += quiet_hits;
        t->scored += quiet_hits;
        dense = 0;
    }
    if (scan_row(t, r, lo, dense, nt, &h, &rfloor) < 0
        || (t->merge && merge_column(t, r, &h, &rfloor) < 0))
        return -1;
    select_best(t->rs, t->ro, h, t->k_r, &t->seed);
    if (h > t->k_r)
        h = t->k_r;
    if (t->seeds && h == t->k_r)
        store_seed(t->seeds + r, t->rs, h);
    if (t->mode == 3)  /* a whole row: in its output order, on the caller's thread */
        sort_row_best(t->rs, t->ro, h, t->row_scratch, &t->seed);
    return append_row(t, r, h);
}

/* every row of the call (with seeds, bottom-up): 0, or -1 with the error in t */
static int
topk_rows(Topk *t)
{
    for (Py_ssize_t i = t->r0; i < t->r1; i++) {
        Py_ssize_t r = t->seeds ? t->r1 - 1 - (i - t->r0) : i;
        if (topk_row(t, r, (int32_t)(i - t->r0)) < 0)
            return -1;
    }
    return 0;
}

/* The call's result: its outputs as bytes (its counts added), or NULL with
 * its error set */
static PyObject *
topk_result(Topk *t, int ok)
{
    if (t->unit_error == 2)
        PyErr_SetString(PyExc_ValueError, "a sum of products of unit weights is nan: dots, "
                        "statistics or n_features do not come from prepared vectors");
    else if (t->unit_error) {
        PyObject *v = PyFloat_FromDouble(t->bad_sum);
        if (v) {
            PyErr_Format(PyExc_ValueError, "a sum of products of unit weights is %R, beyond "
                         "rounding of +-1: were the weights prepared for this measure?", v);
            Py_DECREF(v);
        }
    }
    else if (t->no_memory)
        PyErr_NoMemory();
    else if (!ok)
        bad(t->why);
    else {
        t->counts[0] += t->scored;
        t->counts[1] += t->not_finite;
        t->counts[2] += t->below;
        t->counts[3] += t->n;
        static const char empty[1] = "";
        Py_ssize_t m = t->m;
        return Py_BuildValue("(y#y#y#)", m ? (const char *)t->out_g : empty, m * 8,
                             m ? (const char *)t->out_o : empty, m * 8,
                             m ? (const char *)t->out_s : empty, m * 8);
    }
    return NULL;
}

PyObject *
pair_topk(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *o[N_ARRAYS] = {NULL};
    Topk t;
    memset(&t, 0, sizeof(t));
    int zero_free = 0;
    Arr a[N_ARRAYS];
    if (topk_parse(args, kwargs, o, &t, &zero_free) < 0 || topk_arrays(o, a) < 0)
        return NULL;
    const char *wrong = topk_wrong(a, &t);
    if (wrong) {
        release(a, N_ARRAYS);
        return bad(wrong);
    }
    topk_setup(&t, a);
    PyObject *result = NULL;
    if (topk_alloc(&t, zero_free) < 0)
        PyErr_NoMemory();
    else {
        int ok;
        Py_BEGIN_ALLOW_THREADS
        ok = topk_rows(&t) == 0;
        Py_END_ALLOW_THREADS
        result = topk_result(&t, ok);
    }
    topk_free(&t);
    release(a, N_ARRAYS);
    return result;
}
