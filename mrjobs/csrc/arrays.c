/* Array arguments: through the buffer protocol, checked, aligned (see
 * speedups.h), and the kernels' one error for malformed input. */
#include "speedups.h"

static const char *const FORMATS[] = {"q", "i", "d"};

/* A C-contiguous array of the kind, in a; -1 with ValueError when it is not
 * one.  The kernels index its items as int64_t, int32_t or double, which C
 * allows only at addresses aligned to the item's size; a buffer can be at any
 * address (a numpy view of bytes at an offset: a Stripe decoded from the
 * wire, a row merge_top_k hands back as it is).  So an array read (IN) at
 * another address is copied to an aligned buffer once (the kernels' loops
 * stay plain loads), one written (OUT) is refused: the callers' outputs are
 * numpy's own, aligned. */
int
get_arr(PyObject *obj, Arr *a, int kind, int use, const char *name)
{
    Py_ssize_t size = kind == I32 ? 4 : 8;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (use == OUT ? PyBUF_WRITABLE : 0);
    a->held = 0;
    a->copy = NULL;
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
    a->p = a->view.buf;
    if (use == IN_ANY || (uintptr_t)a->view.buf % size == 0)
        return 0;
    if (use == OUT) {
        PyErr_Format(PyExc_ValueError, "%s: expected an array aligned to %zd bytes", name,
                     size);
        return -1;
    }
    /* (PyMem_Malloc: aligned for any item; 1 byte at least) */
    if (!(a->copy = PyMem_Malloc(a->view.len ? a->view.len : 1))) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(a->copy, a->view.buf, a->view.len);
    a->p = a->copy;
    return 0;
}

void
release(Arr *arrs, int n)
{
    for (int i = 0; i < n; i++)
        if (arrs[i].held) {
            PyBuffer_Release(&arrs[i].view);
            PyMem_Free(arrs[i].copy);
            arrs[i].held = 0;
            arrs[i].copy = NULL;
        }
}

/* The n arrays objs into a (get_arr: kinds[i], names[i]; the arrays from
 * first_out on written, OUT, the others read, IN); -1 with an error set and
 * every array released when one is not of its kind */
int
get_arrs(PyObject *const *objs, Arr *a, int n, const int *kinds, const char *const *names,
         int first_out)
{
    memset(a, 0, n * sizeof(Arr));
    for (int i = 0; i < n; i++)
        if (get_arr(objs[i], &a[i], kinds[i], i >= first_out ? OUT : IN, names[i]) < 0) {
            release(a, n);
            return -1;
        }
    return 0;
}

PyObject *
bad(const char *what)
{
    PyErr_Format(PyExc_ValueError, "malformed block: %s", what);
    return NULL;
}
