/*
 * The compact input: a vector record (codecs/SPEC.md 3.1 and 3.2: escaped
 * UUID key, TAB, escaped vector value) parsed in one pass where it is all the
 * job needs (parse_compact_sorted); any other line is the callers' general
 * parser's, which counts or refuses it by name.
 */
#include "speedups.h"

/* The framing's escape byte and the first byte it stands for (SPEC.md 2) */
#define ESCAPE 0x0B
#define ESCAPED_LO 0x09
#define ESCAPED_HI 0x0D
#define CODE_LO 0x30

/*
 * [p, end) unescaped into out (room for end - p bytes): how many bytes, or -1
 * where the framing is broken (a raw 0x09..0x0D other than an escape, an
 * escape last or followed by anything but 0x30..0x34).
 */
static Py_ssize_t
unescape(const unsigned char *p, const unsigned char *end, unsigned char *out)
{
    Py_ssize_t m = 0;
    while (p < end) {
        unsigned char b = *p++;
        if (b < ESCAPED_LO || b > ESCAPED_HI) {
            out[m++] = b;
            continue;
        }
        if (b != ESCAPE || p >= end || *p < CODE_LO || *p > CODE_LO + ESCAPED_HI - ESCAPED_LO)
            return -1;
        out[m++] = (unsigned char)(*p++ - CODE_LO + ESCAPED_LO);
    }
    return m;
}

static uint32_t
big_endian_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* a little-endian float64 or float32 at p, as a double */
static double
weight_at(const unsigned char *p, int float32)
{
    unsigned char b[8];
    int width = float32 ? 4 : 8;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(b, p, width);
#else
    for (int i = 0; i < width; i++)
        b[i] = p[width - 1 - i];
#endif
    if (float32) {
        float f;
        memcpy(&f, b, 4);
        return (double)f;
    }
    double d;
    memcpy(&d, b, 8);
    return d;
}

/*
 * The record in the unescaped value v (m bytes): its n ids into ids and its
 * weights as float64 into w (room for m / 20 entries): n, or -1 where the
 * record is not one the job takes as it is -- another kind, a length that is
 * not the header's, no entry, ids not strictly ascending, a weight that is
 * 0 or not finite.
 */
static Py_ssize_t
vector_of(const unsigned char *v, Py_ssize_t m, unsigned char *ids, double *w)
{
    if (m < 5 || (v[0] != 0x01 && v[0] != 0x02))
        return -1;
    int float32 = v[0] == 0x02;
    Py_ssize_t width = float32 ? 4 : 8;
    uint32_t n = big_endian_u32(v + 1);
    if (n < 1 || (m - 5) / (16 + width) < (Py_ssize_t)n || m != 5 + (16 + width) * (Py_ssize_t)n)
        return -1;
    const unsigned char *id = v + 5, *wt = v + 5 + 16 * (Py_ssize_t)n;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)n; i++) {
        if (i && memcmp(id + 16 * (i - 1), id + 16 * i, 16) >= 0)
            return -1;
        double x = weight_at(wt + width * i, float32);
        if (x == 0.0 || !isfinite(x))
            return -1;
        w[i] = x;
    }
    memcpy(ids, id, 16 * (size_t)n);
    return n;
}

/*
 * parse_compact_sorted(line bytes) -> (doc bytes, ids bytes, weights bytearray) or None
 *
 * A compact vector record that needs nothing more than decoding: its UUID
 * key, its ids (16 bytes each, strictly ascending, as the record must hold
 * them) and its weights as float64 (a float32 record's widened) -- what
 * mrjobs.parsing's general parser makes of it, through the job's checks
 * unchanged: at least one entry, every weight finite and not 0.  None for
 * any other line (no TAB, a broken framing, a key that is not 16 bytes,
 * another kind, a wrong length, ids out of order, a weight 0 or not finite):
 * the general parser names what is wrong, or counts it.
 */
PyObject *
parse_compact_sorted(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *p = view.buf, *end = p + view.len;
    const unsigned char *tab = memchr(p, '\t', view.len);
    PyObject *result = NULL;
    unsigned char *raw = NULL, *ids = NULL;
    double *w = NULL;
    if (!tab) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    raw = PyMem_Malloc(view.len + 1);
    ids = PyMem_Malloc(view.len + 1);
    w = PyMem_Malloc((view.len / 20 + 1) * sizeof(double));
    if (!raw || !ids || !w) {
        PyErr_NoMemory();
        goto done;
    }
    unsigned char doc[16];
    Py_ssize_t key = unescape(p, tab, raw);
    if (key != 16) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    memcpy(doc, raw, 16);
    Py_ssize_t m = unescape(tab + 1, end, raw);
    Py_ssize_t n = m < 0 ? -1 : vector_of(raw, m, ids, w);
    if (n < 0)
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("(y#y#N)", (const char *)doc, (Py_ssize_t)16,
                               (const char *)ids, 16 * n,
                               PyByteArray_FromStringAndSize((const char *)w,
                                                             n * (Py_ssize_t)sizeof(double)));
done:
    PyMem_Free(raw);
    PyMem_Free(ids);
    PyMem_Free(w);
    PyBuffer_Release(&view);
    return result;
}
