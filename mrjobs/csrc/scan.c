/*
 * pair_topk's dense scan: a dense row's sums (acc, hit over [lo, n_c)) read
 * 8 columns a step, the quiet ones -- whose sum changes nothing: below the
 * row's floor and its column's, within the checks -- passed over and
 * counted (next_loud), the others listed (loud_columns, in AVX2 where the
 * processor has it); and a dense row's first floor from a sample
 * (first_floor).
 */
#include "kernel.h"
#include "select.h"

#ifdef HAVE_AVX2_LOUD
#include <immintrin.h>
#endif

/* The dense scan's fast part (pair_topk): from column c on, the hit columns
 * whose sum is quiet -- below the row's floor rf and, with floor, the
 * column's, and within [ql, qh] -- are passed over and counted in *hits;
 * the first hit column that is not is returned (to: none).  8 columns a
 * step (4 doubles an instruction where GCC's vector types are): a step whose
 * hit columns are all quiet holds no loud column and counts its hits; a step
 * that holds one is tested one by one, up to that column.  The same columns
 * and counts as testing each in turn, since only a loud column's offers move
 * a floor.  pair_topk calls it after QUIET_RUN quiet columns in a row
 * (where loud ones are many -- a large k, a row's first columns -- the call
 * costs more than it skips: --top-k 10 on a dense block took 15% less time,
 * --top-k 1000 the same). */

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
VECTOR_CLONES Py_ssize_t
next_loud(const double *restrict acc, const unsigned char *restrict hit,
          const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf, double ql,
          double qh, int64_t *hits)
{
    int64_t n = 0;
#if defined(__GNUC__)
    for (; c + 8 <= to; c += 8) {
        v4d x0, x1;
        v4l q0, q1, h0, h1;  /* h: a lane of -1 where the column is hit */
        quiet_eight(acc, floor, c, rf, ql, qh, &x0, &x1, &q0, &q1);
        if (hit) {
            h0 = (v4l){-(int64_t)(hit[c] != 0), -(int64_t)(hit[c + 1] != 0),
                       -(int64_t)(hit[c + 2] != 0), -(int64_t)(hit[c + 3] != 0)};
            h1 = (v4l){-(int64_t)(hit[c + 4] != 0), -(int64_t)(hit[c + 5] != 0),
                       -(int64_t)(hit[c + 6] != 0), -(int64_t)(hit[c + 7] != 0)};
        }
        else {  /* zero_free: the sums that are not 0.0 */
            h0 = x0 != V4(0.0);
            h1 = x1 != V4(0.0);
        }
        /* a column not hit is passed over whatever its sum (0.0) and floors:
         * were it tested, a column floor below 0.0 (-inf until the column's
         * buffer fills) would end the fast part here, and the one-by-one
         * loop below would walk the rest of the row (most of the scan's time
         * on short documents) */
        v4l loud = (h0 & ~q0) | (h1 & ~q1);
        if (loud[0] | loud[1] | loud[2] | loud[3])
            break;
        v4l z = h0 + h1;
        n -= z[0] + z[1] + z[2] + z[3];
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
#define FLOOR_SAMPLE 256

VECTOR_CLONES double
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

#ifdef HAVE_AVX2_LOUD
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
Py_ssize_t
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
