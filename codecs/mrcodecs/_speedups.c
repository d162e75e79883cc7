/*
 * Optional C twin of mrcodecs.framing: escape/unescape of the line-safe framing.
 *
 * Built as the top-level module ``_mrcodecs_speedups`` so that a pure-Python
 * copy of mrcodecs shipped to a task in a zip still finds it when it is
 * installed there.  The byte mapping is defined in codecs/SPEC.md; the
 * pure-Python twin in framing.py must give identical results (tests compare).
 *
 * Bytes 0x09..0x0D are written as 0x0B followed by (byte + 0x27), i.e.
 * '0'..'4'.  unescape() returns bytes, or, for malformed input, the int byte
 * offset of the first offending byte (the Python side builds the message).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define ESC 0x0B
#define LO 0x09
#define HI 0x0D
#define SHIFT 0x27

static inline int needs_escape(unsigned char c) { return (unsigned char)(c - LO) <= (HI - LO); }

/*
 * Blocks of 16 bytes are tested at once with GCC/Clang vector extensions
 * (SSE2 on x86-64, NEON on arm64).  On random bytes about 27% of blocks hold
 * a byte in 0x09..0x0D; the others are copied whole, and in the rest only the
 * special bytes are visited, through the bit mask.  Other compilers and
 * big-endian machines use the plain byte loop.
 */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) \
    && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VECTOR 1
#define BLOCK 16
#define SLACK 32
typedef unsigned char v16u8 __attribute__((vector_size(16)));
typedef uint64_t v2u64 __attribute__((vector_size(16)));

/* 0xFF in each byte of the two 8-byte halves that is in LO..HI. */
static inline v2u64 block_mask(const unsigned char *p)
{
    v16u8 v;
    memcpy(&v, p, 16);
    v16u8 lo = {LO, LO, LO, LO, LO, LO, LO, LO, LO, LO, LO, LO, LO, LO, LO, LO};
    v16u8 span = {HI - LO, HI - LO, HI - LO, HI - LO, HI - LO, HI - LO, HI - LO, HI - LO,
                  HI - LO, HI - LO, HI - LO, HI - LO, HI - LO, HI - LO, HI - LO, HI - LO};
    return (v2u64)((v16u8)((v16u8)(v - lo) <= span));
}

/* Copy len (< 16) bytes from src; as one fixed 16-byte copy when the input
 * (ending at end) has 16 bytes there; the output always has SLACK spare. */
#define COPY_SPAN(dst, src, len, end)                                           \
    do {                                                                        \
        if ((src) + BLOCK <= (end))                                             \
            memcpy((dst), (src), BLOCK);                                        \
        else                                                                    \
            memcpy((dst), (src), (len));                                        \
    } while (0)

/* Index (0..15) of the lowest flagged byte; clears it from the mask. */
static inline int pop_lowest(uint64_t *m0, uint64_t *m1)
{
    if (*m0) {
        int k = __builtin_ctzll(*m0) >> 3;
        *m0 &= ~(0xFFULL << (k << 3));
        return k;
    }
    int k = __builtin_ctzll(*m1) >> 3;
    *m1 &= ~(0xFFULL << (k << 3));
    return 8 + k;
}
#else
#define VECTOR 0
#define SLACK 0
#endif

static Py_ssize_t
count_special(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t count = 0, i = 0;
#if VECTOR
    for (; i + BLOCK <= n; i += BLOCK) {
        v2u64 m = block_mask(s + i);
        /* flagged bytes are 0xFF: sum their low bits with one multiply */
        const uint64_t ones = 0x0101010101010101ULL;
        count += (Py_ssize_t)((((m[0] & ones) + (m[1] & ones)) * ones) >> 56);
    }
#endif
    for (; i < n; i++)
        count += needs_escape(s[i]);
    return count;
}

/* Write the escaped form of s[0:n] at d (which has SLACK spare bytes beyond
 * the escaped length); return the end of what was written. */
static unsigned char *
escape_into(unsigned char *d, const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
#if VECTOR
    for (; i + BLOCK <= n; i += BLOCK) {
        const unsigned char *p = s + i;
        v2u64 m = block_mask(p);
        uint64_t m0 = m[0], m1 = m[1];
        int start = 0;
        while (m0 | m1) {
            int k = pop_lowest(&m0, &m1);
            COPY_SPAN(d, p + start, k - start, s + n);
            d += k - start;
            d[0] = ESC;
            d[1] = (unsigned char)(p[k] + SHIFT);
            d += 2;
            start = k + 1;
        }
        COPY_SPAN(d, p + start, BLOCK - start, s + n);
        d += BLOCK - start;
    }
#endif
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (needs_escape(c)) {
            *d++ = ESC;
            *d++ = (unsigned char)(c + SHIFT);
        } else {
            *d++ = c;
        }
    }
    return d;
}

static PyObject *
escape(PyObject *self, PyObject *arg)
{
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t extra = count_special(in.buf, in.len);
    if (extra == 0 && PyBytes_CheckExact(arg)) {
        PyBuffer_Release(&in);
        Py_INCREF(arg);
        return arg;
    }
    /* SLACK spare bytes let the block loop store whole 16-byte blocks (fixed
     * size copies the compiler turns into one vector store); the object is
     * shrunk to its real size at the end. */
    PyObject *out = PyBytes_FromStringAndSize(NULL, in.len + extra + SLACK);
    if (out == NULL) {
        PyBuffer_Release(&in);
        return NULL;
    }
    unsigned char *d0 = (unsigned char *)PyBytes_AS_STRING(out);
    unsigned char *d = escape_into(d0, in.buf, in.len);
    PyBuffer_Release(&in);
    if (_PyBytes_Resize(&out, d - d0) < 0)
        return NULL;
    return out;
}

/*
 * One pass: validate and copy into a buffer of the input's size, then shrink
 * it.  Returns the new bytes, or the int offset of the first malformed byte:
 * a byte in 0x09..0x0D other than the escape byte, an escape byte at the end,
 * or an escape byte followed by anything but 0x30..0x34.
 */
static PyObject *
unescape(PyObject *self, PyObject *arg)
{
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *s = (const unsigned char *)in.buf;
    Py_ssize_t n = in.len, i = 0, bad = -1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n + SLACK);
    if (out == NULL) {
        PyBuffer_Release(&in);
        return NULL;
    }
    unsigned char *d0 = (unsigned char *)PyBytes_AS_STRING(out), *d = d0;
#define UNESCAPE_AT(pos)                                                          \
    do {                                                                          \
        Py_ssize_t at_ = (pos);                                                   \
        if (s[at_] != ESC || at_ + 1 >= n                                         \
            || (unsigned char)(s[at_ + 1] - (LO + SHIFT)) > (HI - LO)) {          \
            bad = at_;                                                            \
            goto done;                                                            \
        }                                                                         \
        *d++ = (unsigned char)(s[at_ + 1] - SHIFT);                               \
    } while (0)
#if VECTOR
    /* A code byte may spill into the next block: "start" can reach 17, and the
     * next block then begins after it. */
    while (i + BLOCK <= n) {
        const unsigned char *p = s + i;
        v2u64 m = block_mask(p);
        uint64_t m0 = m[0], m1 = m[1];
        int start = 0;
        while (m0 | m1) {
            int k = pop_lowest(&m0, &m1);
            if (k < start)
                continue; /* a code byte cannot be special; only reached after an error */
            COPY_SPAN(d, p + start, k - start, s + n);
            d += k - start;
            UNESCAPE_AT(i + k);
            start = k + 2;
        }
        if (start < BLOCK) {
            COPY_SPAN(d, p + start, BLOCK - start, s + n);
            d += BLOCK - start;
            i += BLOCK;
        } else {
            i += start;
        }
    }
#endif
    while (i < n) {
        if (needs_escape(s[i])) {
            UNESCAPE_AT(i);
            i += 2;
        } else {
            *d++ = s[i++];
        }
    }
#undef UNESCAPE_AT
done:
    PyBuffer_Release(&in);
    if (bad >= 0) {
        Py_DECREF(out);
        return PyLong_FromSsize_t(bad);
    }
    if (d - d0 == n && PyBytes_CheckExact(arg)) {
        Py_DECREF(out);
        Py_INCREF(arg);
        return arg;
    }
    if (_PyBytes_Resize(&out, d - d0) < 0)
        return NULL;
    return out;
}

/*
 * escape_line(key, *value_parts) -> escape(key) + TAB + escape(b"".join(value_parts))
 * in one allocation; every argument is any contiguous buffer (bytes, numpy
 * array).  Saves the joins and copies of building a line in Python.
 */
static PyObject *
escape_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer bufs[8];
    Py_ssize_t total = 0, k, i;
    if (nargs < 1 || nargs > 8) {
        PyErr_SetString(PyExc_TypeError, "escape_line takes 1 to 8 buffers");
        return NULL;
    }
    for (k = 0; k < nargs; k++) {
        if (PyObject_GetBuffer(args[k], &bufs[k], PyBUF_C_CONTIGUOUS) < 0) {
            while (--k >= 0)
                PyBuffer_Release(&bufs[k]);
            return NULL;
        }
        total += bufs[k].len + count_special(bufs[k].buf, bufs[k].len);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total + 1 + SLACK);
    if (out != NULL) {
        unsigned char *d0 = (unsigned char *)PyBytes_AS_STRING(out);
        unsigned char *d = escape_into(d0, bufs[0].buf, bufs[0].len);
        *d++ = '\t';
        for (k = 1; k < nargs; k++)
            d = escape_into(d, bufs[k].buf, bufs[k].len);
        if (_PyBytes_Resize(&out, d - d0) < 0)
            out = NULL;
    }
    for (k = 0; k < nargs; k++)
        PyBuffer_Release(&bufs[k]);
    return out;
}

static PyObject *uuid_type, *uuid_is_safe, *str_int, *str_is_safe;

/* set_uuid_type(uuid.UUID, uuid.SafeUUID.unknown): enables uuid_from_bytes. */
static PyObject *
set_uuid_type(PyObject *self, PyObject *args)
{
    PyObject *t, *safe;
    if (!PyArg_ParseTuple(args, "OO", &t, &safe))
        return NULL;
    Py_XSETREF(uuid_type, Py_NewRef(t));
    Py_XSETREF(uuid_is_safe, Py_NewRef(safe));
    Py_RETURN_NONE;
}

/* uuid_from_bytes(b16) -> uuid.UUID, as UUID(bytes=b16) without its checks. */
static PyObject *
uuid_from_bytes(PyObject *self, PyObject *arg)
{
    Py_buffer in;
    if (uuid_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_uuid_type() not called");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    if (in.len != 16) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "uuid_from_bytes needs 16 bytes");
        return NULL;
    }
    PyObject *value = _PyLong_FromByteArray(in.buf, 16, 0, 0);
    PyBuffer_Release(&in);
    if (value == NULL)
        return NULL;
    PyTypeObject *tp = (PyTypeObject *)uuid_type;
    PyObject *u = tp->tp_alloc(tp, 0);
    if (u == NULL || PyObject_GenericSetAttr(u, str_int, value) < 0
        || PyObject_GenericSetAttr(u, str_is_safe, uuid_is_safe) < 0) {
        Py_XDECREF(u);
        Py_DECREF(value);
        return NULL;
    }
    Py_DECREF(value);
    return u;
}

static PyMethodDef methods[] = {
    {"escape_line", (PyCFunction)(void (*)(void))escape_line, METH_FASTCALL,
     "escape_line(key, *value_parts): escaped key, TAB, escaped concatenated value."},
    {"set_uuid_type", set_uuid_type, METH_VARARGS, "Register uuid.UUID and SafeUUID.unknown."},
    {"uuid_from_bytes", uuid_from_bytes, METH_O, "uuid.UUID from exactly 16 bytes."},
    {"escape", escape, METH_O, "Escape bytes 0x09..0x0D (see codecs/SPEC.md)."},
    {"unescape", unescape, METH_O,
     "Undo escape(); return the bytes, or the int offset of the first malformed byte."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mrcodecs_speedups", "C twin of mrcodecs.framing.", -1, methods
};

PyMODINIT_FUNC
PyInit__mrcodecs_speedups(void)
{
    str_int = PyUnicode_InternFromString("int");
    str_is_safe = PyUnicode_InternFromString("is_safe");
    if (str_int == NULL || str_is_safe == NULL)
        return NULL;
    return PyModule_Create(&module);
}
