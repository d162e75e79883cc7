/*
 * The module _mrjobs_speedups: its method table and init (Ryu's tables
 * computed, the processor's AVX2 checked).  The functions are in the files
 * of their concern: see speedups.h.
 */
#include "floatrepr.h"
#include "kernel.h"

/* whether loud_columns runs its AVX2 variant (set at import, or by avx2()) */
int have_avx2 = 0;

#ifdef HAVE_AVX2_LOUD
/* whether the processor runs loud_columns_avx2's instructions */
int
cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")
           && __builtin_cpu_supports("bmi");
}
#endif

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
    {"pair_topk", (PyCFunction)(void (*)(void))pair_topk, METH_VARARGS | METH_KEYWORDS,
     "pair_topk(*, a, bt, n_c, start, end, mode, k, kind, threshold, limit, counts, "
     "kept=None, merge=False, zero_free=False, seeds=None) "
     "-> (groups, others, scores) as bytes."},
    {"parse_json_line", parse_json_line, METH_O,
     "parse_json_line(line) -> (doc, ids, weights) of the common JSON input line, or None."},
    {"parse_json_sorted", parse_json_sorted, METH_O,
     "parse_json_sorted(line) -> (doc, ids, weights) of a common JSON input line that needs "
     "only sorting, sorted; or None."},
    {"parse_compact_sorted", parse_compact_sorted, METH_O,
     "parse_compact_sorted(line) -> (doc, ids, weights) of a compact vector record that needs "
     "only decoding (float64 weights); or None."},
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
