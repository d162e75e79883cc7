/*
 * The selections: one quickselect and one quicksort (an Order says how to
 * move the items), the k best of (score, other) entries -- better()'s order:
 * a higher score, ties by the smaller other --, a row in its output order,
 * the k-th best value of a sample, and the top-k buffer's cut; and the
 * Python-visible selections top_k_rows, kept_offer and kept_take.
 */
#include "select.h"

/* Move the k first of n items in the order to the front (in no set order):
 * quickselect with a pseudo-random pivot, expected O(n).  Which items are
 * the k first does not depend on the pivots where the order is strict. */
void
quickselect(void *items, Py_ssize_t n, Py_ssize_t k, const Order *order, uint64_t *seed)
{
    if (k >= n)
        return;
    Py_ssize_t lo = 0, hi = n - 1, t = k - 1;
    while (hi > lo) {
        Py_ssize_t store = order->partition(items, lo, hi, seed);
        if (store == t)
            return;
        if (store < t)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/* The n items from lo in the order: quicksort with the quickselect's
 * partition (the smaller side recursed: O(log n) deep), insertion sort
 * below 16 */
void
quicksort(void *items, Py_ssize_t lo, Py_ssize_t n, const Order *order, uint64_t *seed)
{
    while (n > 16) {
        Py_ssize_t hi = lo + n - 1, store = order->partition(items, lo, hi, seed);
        if (store - lo < hi - store) {
            quicksort(items, lo, store - lo, order, seed);
            n = hi - store;
            lo = store + 1;
        }
        else {
            quicksort(items, store + 1, hi - store, order, seed);
            n = store - lo;
        }
    }
    order->insertion_sort(items, lo, n);
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

/* (score, other) entries: the scores s and the others o */
typedef struct {
    double *s;
    int64_t *o;
} Scored;

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

static Py_ssize_t
partition_scored(void *items, Py_ssize_t lo, Py_ssize_t hi, uint64_t *seed)
{
    Scored *x = items;
    return partition_best(x->s, x->o, lo, hi, seed);
}

static void
insertion_scored(void *items, Py_ssize_t lo, Py_ssize_t n)
{
    double *s = ((Scored *)items)->s + lo;
    int64_t *o = ((Scored *)items)->o + lo;
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

/* better()'s order */
static const Order BEST = {partition_scored, insertion_scored};

/* Move the k best of n entries to the front (in no set order) */
void
select_best(double *s, int64_t *o, Py_ssize_t n, Py_ssize_t k, uint64_t *seed)
{
    Scored x = {s, o};
    quickselect(&x, n, k, &BEST, seed);
}

/* n entries in order, best first */
static void
sort_best(double *s, int64_t *o, Py_ssize_t n, uint64_t *seed)
{
    Scored x = {s, o};
    quicksort(&x, 0, n, &BEST, seed);
}

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
void
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

#define CUT_SAMPLE 64

#define RANK_SMALL 32

/* The value at rank t (0: the highest) of the n scores x: up to RANK_SMALL
 * of them counted, more reordered by a quickselect (Hoare's partition around
 * the middle entry); the same value as sorting them would give (the sample's
 * sort was most of a cut at --top-k 100) */
double
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
void
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

/*
 * top_k_rows(groups q, others q, scores d, k, out_g q, out_o q, out_s d) -> int
 *
 * Entries grouped by group (each group's entries contiguous): each group's k
 * best (in no set order), groups in the order they come; returns how many
 * were written.  The outputs hold at least as many entries as the input.  A
 * k of at least the number of entries keeps them all.
 */
PyObject *
top_k_rows(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOnOOO", &o[0], &o[1], &o[2], &k, &o[3], &o[4], &o[5]))
        return NULL;
    Arr a[6];
    static const int kinds[6] = {I64, I64, F64, I64, I64, F64};
    static const char *const names[6] = {"groups", "others", "scores", "out_g", "out_o",
                                         "out_s"};
    if (get_arrs(o, a, 6, kinds, names, 3) < 0)
        return NULL;
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

/* what is wrong with kept_offer's arrays a, k and cap, or NULL */
static const char *
kept_offer_shapes(const Arr *a, Py_ssize_t k, Py_ssize_t cap)
{
    Py_ssize_t n = a[0].n, n_g = a[5].n;
    if (k < 1 || cap <= k)
        return "kept_offer: shapes";
    /* every group's slots: a product that wraps around could match the
     * buffers' length and send a group's offset past their end */
    Py_ssize_t slots = size_mul(n_g, cap);
    if (slots < 0)
        return "kept_offer: len(kn) * cap slots overflow";
    if (a[1].n != n || a[2].n != n || a[3].n != slots || a[4].n != slots || a[6].n != n_g)
        return "kept_offer: shapes";
    return NULL;
}

/*
 * kept_offer(groups q, others q, scores d, skip_self, k, cap, ks d, ko q, kn q, floor d)
 *
 * Each group's best k entries so far, in a buffer of cap > k slots a group
 * (len(ks) = len(kn) * cap): group g's entries are ks[g*cap : g*cap + kn[g]]
 * (scores) and ko[...] (others).  Each entry is offered to its group's buffer
 * (buffer_offer) unless it is below the group's floor.  With skip_self,
 * entries whose group equals their other are left out.  O(1) an entry,
 * amortized, where a heap would cost O(log k), each level a cache miss when
 * k is large.
 */
PyObject *
kept_offer(PyObject *self, PyObject *args)
{
    PyObject *o[7];
    int skip_self;
    Py_ssize_t k, cap;
    if (!PyArg_ParseTuple(args, "OOOpnnOOOO", &o[0], &o[1], &o[2], &skip_self, &k, &cap,
                          &o[3], &o[4], &o[5], &o[6]))
        return NULL;
    Arr a[7];
    static const int kinds[7] = {I64, I64, F64, F64, I64, I64, F64};
    static const char *const names[7] = {"groups", "others", "scores", "ks", "ko", "kn",
                                         "floor"};
    if (get_arrs(o, a, 7, kinds, names, 3) < 0)
        return NULL;
    Py_ssize_t n = a[0].n, n_g = a[5].n;
    const char *wrong = kept_offer_shapes(a, k, cap);
    if (wrong) {
        release(a, 7);
        return bad(wrong);
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
PyObject *
kept_take(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "nOOOOOO", &k, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Arr a[6];
    static const int kinds[6] = {F64, I64, I64, I64, I64, F64};
    static const char *const names[6] = {"ks", "ko", "kn", "out_g", "out_o", "out_s"};
    if (get_arrs(o, a, 6, kinds, names, 0) < 0)
        return NULL;
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
