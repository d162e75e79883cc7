/*
 * The JSON output (for mrjobs.jobprotocols): an output line's neighbours as
 * json.dumps writes them (neighbours_json), their scores by floatrepr.c;
 * repr_floats for the tests.
 */
#include "floatrepr.h"

/* repr_floats(scores d) -> list of str: repr_double of each (finite) score,
 * for the tests */
PyObject *
repr_floats(PyObject *self, PyObject *arg)
{
    Arr a;
    if (get_arr(arg, &a, F64, IN_ANY, "scores") < 0) {
        release(&a, 1);
        return NULL;
    }
    PyObject *list = PyList_New(a.n);
    for (Py_ssize_t i = 0; list && i < a.n; i++) {
        double v = f64_at(a.p, i);
        if (!isfinite(v)) {
            Py_CLEAR(list);
            PyErr_SetString(PyExc_ValueError, "repr_floats: a score not finite");
            break;
        }
        char buf[32];
        int len = format_score(v, buf);
        if (len < 0) {
            Py_CLEAR(list);
            break;
        }
        PyObject *s = PyUnicode_FromStringAndSize(buf, len);
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, s);
    }
    release(&a, 1);
    return list;
}

/* '"<uuid>"' of 16 id bytes at w (38 bytes); the end */
static inline char *
quoted_hex_uuid(const unsigned char *id, char *w)
{
    static const char hex[] = "0123456789abcdef";
    *w++ = '"';
    for (int b = 0; b < 16; b++) {
        if (b == 4 || b == 6 || b == 8 || b == 10)
            *w++ = '-';
        *w++ = hex[id[b] >> 4];
        *w++ = hex[id[b] & 15];
    }
    *w++ = '"';
    return w;
}

/* True if two of the n 16-byte ids are equal (an open-addressing set). */
static int
has_repeats(const unsigned char *ids, Py_ssize_t n, int *error)
{
    *error = 0;
    if (n < 2)
        return 0;
    /* the slots: fewer than 4 n of them */
    if (size_mul(n, 4 * (Py_ssize_t)sizeof(Py_ssize_t)) < 0) {
        *error = 1;
        return 0;
    }
    Py_ssize_t size = 4;
    while (size < 2 * n)
        size *= 2;
    Py_ssize_t *slots = PyMem_Malloc(size * sizeof(Py_ssize_t));
    if (!slots) {
        *error = 1;
        return 0;
    }
    for (Py_ssize_t i = 0; i < size; i++)
        slots[i] = -1;
    int found = 0;
    for (Py_ssize_t i = 0; i < n && !found; i++) {
        uint64_t h0, h1;
        memcpy(&h0, ids + 16 * i, 8);
        memcpy(&h1, ids + 16 * i + 8, 8);
        uint64_t h = (h0 ^ (h1 * 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL;
        Py_ssize_t j = (Py_ssize_t)((h >> 17) & (uint64_t)(size - 1));
        for (;; j = (j + 1) & (size - 1)) {
            if (slots[j] < 0) {
                slots[j] = i;
                break;
            }
            if (memcmp(ids + 16 * slots[j], ids + 16 * i, 16) == 0) {
                found = 1;
                break;
            }
        }
    }
    PyMem_Free(slots);
    return found;
}

/* Whether the n neighbours (ids, scores sc at any address) are what
 * neighbours_json writes -- every score finite, no id twice: 1; 0 where
 * not; -1 out of memory (the error set) */
static int
plain_neighbours(const unsigned char *ids, const void *sc, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (!isfinite(f64_at(sc, i)))
            return 0;
    int error;
    if (has_repeats(ids, n, &error))
        return 0;
    if (error) {
        PyErr_NoMemory();
        return -1;
    }
    return 1;
}

/* The line of the n neighbours (with key: the whole line) at w; its end,
 * or NULL (an error set) */
static char *
write_neighbours(char *w, const unsigned char *id, const void *sc, Py_ssize_t n,
                 const char *key)
{
    if (key) {
        w = quoted_hex_uuid((const unsigned char *)key, w);
        *w++ = '\t';
        *w++ = '{';
    }
    for (Py_ssize_t i = 0; i < n; i++, id += 16) {
        if (i) {
            *w++ = ',';
            *w++ = ' ';
        }
        w = quoted_hex_uuid(id, w);
        *w++ = ':';
        *w++ = ' ';
        int len = format_score(f64_at(sc, i), w);
        if (len < 0)
            return NULL;
        w += len;
    }
    if (key)
        *w++ = '}';
    return w;
}

/*
 * neighbours_json(ids, scores d[, key]) -> bytes or None
 *
 * The body of a JSON output line: '"<uuid>": <score>' for each neighbour,
 * joined by ", " -- the bytes json.dumps writes for a dict of UUID strings
 * to floats (lower-case hex, 8-4-4-4-12; each score as repr(float) writes
 * it, by the same CPython function).  ids: 16 bytes a neighbour.  With key
 * (16 bytes), the whole line: '"<key's uuid>" TAB {' body '}', written in
 * one buffer (a line at --top-k 1000 is ~60 kB: no copies of it).  None
 * when a score is not finite or an id repeats: json.dumps of a dict does
 * other things there, which the caller does.
 */

PyObject *
neighbours_json(PyObject *self, PyObject *args)
{
    PyObject *ids_obj, *scores_obj;
    const char *key = NULL;
    Py_ssize_t key_len = 0;
    if (!PyArg_ParseTuple(args, "OO|y#", &ids_obj, &scores_obj, &key, &key_len))
        return NULL;
    if (key && key_len != 16) {
        PyErr_SetString(PyExc_ValueError, "neighbours_json: a key of 16 bytes expected");
        return NULL;
    }
    Py_buffer ids;
    if (PyObject_GetBuffer(ids_obj, &ids, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    Arr sc;
    /* (scores at any address: a row merge_top_k handed back as it is) */
    if (get_arr(scores_obj, &sc, F64, IN_ANY, "scores") < 0) {
        PyBuffer_Release(&ids);
        release(&sc, 1);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = sc.n;
    /* (16 and 72 bytes a neighbour: sizes checked, as every size here) */
    if (size_mul(n, 72) < 0 || ids.len != 16 * n) {
        PyErr_SetString(PyExc_ValueError, "neighbours_json: 16 id bytes a score expected");
        goto done;
    }
    int plain = plain_neighbours(ids.buf, sc.p, n);
    if (plain <= 0) {
        result = plain ? NULL : Py_NewRef(Py_None);
        goto done;
    }
    /* '"' 36 '"' ": " score ", ": 42 bytes and the score (repr: at most 24);
     * the key's '"' 36 '"' TAB '{' and the '}': 41 */
    Py_ssize_t size = size_add(n * 72, key ? 41 : 0);  /* (n * 72 checked above) */
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "neighbours_json: too many neighbours");
        goto done;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size ? size : 1);
    if (!out)
        goto done;
    char *start = PyBytes_AS_STRING(out), *w = write_neighbours(start, ids.buf, sc.p, n, key);
    if (!w)
        Py_DECREF(out);
    else if (_PyBytes_Resize(&out, w - start) == 0)
        result = out;  /* (else out is gone and the error set) */
done:
    PyBuffer_Release(&ids);
    release(&sc, 1);
    return result;
}
