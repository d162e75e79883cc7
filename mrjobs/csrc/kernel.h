/*
 * pair_topk's row sums (kernel.c) and dense scan (scan.c): the workspace of
 * a call (Rows), and the helpers topk.c calls a row.
 */
#ifndef MRJOBS_KERNEL_H
#define MRJOBS_KERNEL_H

#include "speedups.h"

/* A call's workspace for its rows' sums (topk_row_sums): the block, the
 * features checked, the heavy features' dense rows, a row's sums */
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

/* loud_columns' AVX2 variant (scan.c), chosen at import (module.c) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HAVE_AVX2_LOUD 1
#endif

/* the scan (scan.c): next_loud after QUIET_RUN quiet columns in a row, a
 * first floor from a k of FIRST_FLOOR_K on */
#define QUIET_RUN 6
#define FIRST_FLOOR_K 20

HIDDEN_BEGIN
/* whether loud_columns runs its AVX2 variant (module.c) */
extern int have_avx2;
int cpu_has_avx2(void);

/* kernel.c */
int heavy_rows(Rows *w);
Py_ssize_t topk_row_sums(Rows *w, Py_ssize_t r, int64_t lo, int32_t row, int *dense,
                         const char **why);

/* scan.c (next_loud and first_floor are VECTOR_CLONES there: declared
 * without it, their callers call the clone the processor's chosen at load) */
Py_ssize_t next_loud(const double *restrict acc, const unsigned char *restrict hit,
                     const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf,
                     double ql, double qh, int64_t *hits);
double first_floor(const double *restrict acc, const unsigned char *restrict hit,
                   Py_ssize_t lo, Py_ssize_t to, Py_ssize_t k, double ql, double qh);
Py_ssize_t loud_columns(const double *restrict acc, const unsigned char *restrict hit,
                        const double *restrict floor, Py_ssize_t c, Py_ssize_t to, double rf,
                        double ql, double qh, int32_t *restrict idx, int64_t *hits);
HIDDEN_END

/* A sum x that changes nothing: below the row's floor rf and its column's
 * f, and within [ql, qh], where every check passes it unchanged */
static inline int
quiet(double x, double rf, double ql, double qh, double f)
{
    return x < rf && x >= ql && x <= qh && x < f;
}

#endif /* MRJOBS_KERNEL_H */
