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
#include "floatrepr.h"

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

/* Ryu's interval around a double, in base 10: vr (the value), vp and vm
 * (the bounds), times 10^e10; whether vm and vr had only zeros below e10 */
typedef struct {
    uint64_t vr, vp, vm;
    int32_t e10;
    int vm_zeros, vr_zeros;
} Interval;

/* The interval of m2 * 2^e2, e2 >= 0 */
static inline void
interval_up(uint64_t m2, int32_t e2, uint32_t mm_shift, int accept_bounds, Interval *v)
{
    const uint64_t mv = 4 * m2;
    const uint32_t q = log10_pow2(e2) - (e2 > 3);
    v->e10 = (int32_t)q;
    const int32_t k = POW5_INV_BITCOUNT + pow5bits((int32_t)q) - 1;
    const int32_t i = -e2 + (int32_t)q + k;
    v->vr = mul_shift(4 * m2, POW5_INV_SPLIT[q], i);
    v->vp = mul_shift(4 * m2 + 2, POW5_INV_SPLIT[q], i);
    v->vm = mul_shift(4 * m2 - 1 - mm_shift, POW5_INV_SPLIT[q], i);
    if (q <= 21) {
        if (mv % 5 == 0)
            v->vr_zeros = pow5_factor(mv) >= q;
        else if (accept_bounds)
            v->vm_zeros = pow5_factor(mv - 1 - mm_shift) >= q;
        else
            v->vp -= pow5_factor(mv + 2) >= q;
    }
}

/* The interval of m2 * 2^e2, e2 < 0 */
static inline void
interval_down(uint64_t m2, int32_t e2, uint32_t mm_shift, int accept_bounds, Interval *v)
{
    const uint64_t mv = 4 * m2;
    const uint32_t q = log10_pow5(-e2) - (-e2 > 1);
    v->e10 = (int32_t)q + e2;
    const int32_t i = -e2 - (int32_t)q;
    const int32_t k = pow5bits(i) - POW5_BITCOUNT;
    const int32_t j = (int32_t)q - k;
    v->vr = mul_shift(4 * m2, POW5_SPLIT[i], j);
    v->vp = mul_shift(4 * m2 + 2, POW5_SPLIT[i], j);
    v->vm = mul_shift(4 * m2 - 1 - mm_shift, POW5_SPLIT[i], j);
    if (q <= 1) {
        v->vr_zeros = 1;
        if (accept_bounds)
            v->vm_zeros = mm_shift == 1;
        else
            v->vp--;
    }
    else if (q < 63)
        v->vr_zeros = (mv & ((1ULL << q) - 1)) == 0;
}

/* The shortest digits in the interval where vm or vr had only zeros below
 * it (digits removed counted in *removed), rounded half to even */
static inline uint64_t
shortest_with_zeros(Interval *v, int accept_bounds, int32_t *removed)
{
    uint64_t vr = v->vr, vp = v->vp, vm = v->vm;
    int vm_zeros = v->vm_zeros, vr_zeros = v->vr_zeros;
    uint8_t last = 0;
    while (vp / 10 > vm / 10) {
        vm_zeros &= vm % 10 == 0;
        vr_zeros &= last == 0;
        last = (uint8_t)(vr % 10);
        vr /= 10;
        vp /= 10;
        vm /= 10;
        ++*removed;
    }
    if (vm_zeros)
        while (vm % 10 == 0) {
            vr_zeros &= last == 0;
            last = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            ++*removed;
        }
    if (vr_zeros && last == 5 && vr % 2 == 0)
        last = 4;  /* round half to even */
    return vr + ((vr == vm && (!accept_bounds || !vm_zeros)) || last >= 5);
}

/* The shortest digits in the interval, the common case (no zeros below it) */
static inline uint64_t
shortest(Interval *v, int32_t *removed)
{
    uint64_t vr = v->vr, vp = v->vp, vm = v->vm;
    int round_up = 0;
    if (vp / 100 > vm / 100) {
        round_up = vr % 100 >= 50;
        vr /= 100;
        vp /= 100;
        vm /= 100;
        *removed += 2;
    }
    while (vp / 10 > vm / 10) {
        round_up = vr % 10 >= 5;
        vr /= 10;
        vp /= 10;
        vm /= 10;
        ++*removed;
    }
    return vr + (vr == vm || round_up);
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
    const uint32_t mm_shift = mantissa != 0 || exponent <= 1;
    Interval v = {0, 0, 0, 0, 0, 0};
    if (e2 >= 0)
        interval_up(m2, e2, mm_shift, accept_bounds, &v);
    else
        interval_down(m2, e2, mm_shift, accept_bounds, &v);
    int32_t removed = 0;
    if (v.vm_zeros || v.vr_zeros)
        *digits = shortest_with_zeros(&v, accept_bounds, &removed);
    else
        *digits = shortest(&v, &removed);
    *exp = v.e10 + removed;
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

/* value = 0.ds * 10^decpt (n digits ds) written positional at w, with at
 * least one digit after the point; the end */
static inline char *
positional(const char *ds, int n, int decpt, char *w)
{
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
    return w;
}

/* value = 0.ds * 10^decpt (n digits ds) written in exponent form at w; the
 * end */
static inline char *
exponential(const char *ds, int n, int decpt, char *w)
{
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
    return w;
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
    if (decpt > -4 && decpt <= 16)
        w = positional(ds, n, decpt, w);
    else
        w = exponential(ds, n, decpt, w);
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
int
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
int
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
