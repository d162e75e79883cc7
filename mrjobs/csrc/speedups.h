/*
 * The optional C kernels of mrjobs: one extension module, _mrjobs_speedups
 * (built by setup.py from the .c files of this folder, found by mrjobs._c),
 * one concern a file:
 *
 *   module.c     the method table, the module's init, the processor's AVX2 check
 *   arrays.c     array arguments through the buffer protocol (get_arr), errors
 *   kernel.c     the block pair's product: dots(), and pair_topk's row sums
 *   scan.c       pair_topk's dense scan: the quiet columns passed over 8 at a time
 *   topk.c       pair_topk: a chunk's products summed, scored and selected in one pass
 *   select.c     the selections (one quickselect, one quicksort), the top-k buffers,
 *                top_k_rows, kept_offer, kept_take
 *   merge.c      merge_top_k: a vector's row from its pieces (the rows step)
 *   floatrepr.c  repr(float) by Ryu
 *   json_out.c   neighbours_json, repr_floats: the JSON output
 *   json_in.c    parse_json_line, parse_json_sorted: the JSON input
 *   compact_in.c parse_compact_sorted: the compact input
 *
 * and four headers: this one (what every file shares: the array arguments,
 * the size checks, the Python-visible functions), select.h (the selections
 * and the top-k buffer, inlined in the hot loops), kernel.h (pair_topk's row
 * sums and scan) and floatrepr.h.
 *
 * mrjobs uses the module when it is importable and falls back to its numpy
 * and Python twins otherwise; both give the same pairs, the same dot products
 * to the bit, the same selections and the same output bytes
 * (tests/pairs/test_pairs.py runs every case on both, tests/pairs/test_pairs_c.py
 * and tests/jobs/test_protocols_c.py compare them).  Every file is built
 * without floating-point contraction (no fused multiply-add: setup.py passes
 * -ffp-contract=off, and clang gets the pragma below), so every sum is the
 * double scipy gives.
 *
 * The selections keep each group's k best entries by score descending, ties
 * by the smaller other index -- the order of mrjobs.pairs.idarrays.top_k_groups --
 * but return them in no set order (the rows step orders each vector's
 * neighbours).  Scores are finite (the scorer drops the others before
 * selection).
 *
 * Arrays come through the buffer protocol: C-contiguous, int64 (q), int32
 * (i) or float64 (d) as each function says, at any address (an array read at
 * an address not aligned to its items is read from an aligned copy, or byte
 * by byte; an output must be aligned: see get_arr).  What the kernels promise
 * of malformed input is a ValueError ("malformed block: ..."), never a read
 * or write out of bounds nor a silently wrong result (tests/pairs/test_pairs_c.py
 * has a test for each):
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
#ifndef MRJOBS_SPEEDUPS_H
#define MRJOBS_SPEEDUPS_H

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

/* a helper inlined where a call would cost a hot loop its registers */
#if defined(__GNUC__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif

/* the files' shared functions: hidden, only PyInit__mrjobs_speedups is the
 * module's (no calls through the PLT between the files) */
#if defined(__GNUC__)
#define HIDDEN_BEGIN _Pragma("GCC visibility push(hidden)")
#define HIDDEN_END _Pragma("GCC visibility pop")
#else
#define HIDDEN_BEGIN
#define HIDDEN_END
#endif

/* An array argument: its buffer, its items (n) and where they are read (p):
 * the buffer itself, or an aligned copy of it (copy) */
typedef struct {
    Py_buffer view;
    Py_ssize_t n;
    void *p, *copy;
    int held;
} Arr;

enum { I64 = 0, I32 = 1, F64 = 2 };
/* how get_arr takes an array: read through p (IN), written (OUT), or read
 * only by f64_at's byte copies, at any address (IN_ANY) */
enum { IN = 0, OUT = 1, IN_ANY = 2 };

/* the items of an array taken IN or OUT (aligned) */
#define I64P(a) ((int64_t *)(a).p)
#define I32P(a) ((int32_t *)(a).p)
#define F64P(a) ((double *)(a).p)

/* the pseudo-random pivots' first seed (every call starts from it) */
#define SEED 0x9E3779B97F4A7C15ULL

HIDDEN_BEGIN

/* arrays.c */
int get_arr(PyObject *obj, Arr *a, int kind, int use, const char *name);
int get_arrs(PyObject *const *objs, Arr *a, int n, const int *kinds,
             const char *const *names, int first_out);
void release(Arr *arrs, int n);
PyObject *bad(const char *what);

/* the Python-visible functions (module.c's method table) */
PyObject *dots(PyObject *self, PyObject *args);
PyObject *pair_topk(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *top_k_rows(PyObject *self, PyObject *args);
PyObject *kept_offer(PyObject *self, PyObject *args);
PyObject *kept_take(PyObject *self, PyObject *args);
PyObject *merge_top_k(PyObject *self, PyObject *args);
PyObject *neighbours_json(PyObject *self, PyObject *args);
PyObject *repr_floats(PyObject *self, PyObject *arg);
PyObject *parse_json_line(PyObject *self, PyObject *arg);
PyObject *parse_json_sorted(PyObject *self, PyObject *arg);
PyObject *parse_compact_sorted(PyObject *self, PyObject *arg);

HIDDEN_END

/* item i of a float64 array taken IN_ANY (or of a buffer of doubles at any
 * address): a byte copy, one plain load where unaligned loads are allowed */
static inline double
f64_at(const void *p, Py_ssize_t i)
{
    double v;
    memcpy(&v, (const char *)p + 8 * i, sizeof(v));
    return v;
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

#endif /* MRJOBS_SPEEDUPS_H */
