/*
 * Optional C twin of mrcodecs._pyimpl: the framing, UUIDs, the vector record
 * and the feature places of an indexed block record.
 *
 * Built as the top-level module ``_mrcodecs_speedups`` so that a pure-Python
 * copy of mrcodecs shipped to a task in a zip still finds it when it is
 * installed there.  It defines the functions of mrcodecs._impl.FUNCTIONS with
 * the contracts written in mrcodecs/_pyimpl.py, whose results must be
 * identical (tests/codecs/test_twins.py compares them); mrcodecs._impl picks one twin.
 * The byte mapping is defined in codecs/SPEC.md.
 *
 * Builds on CPython 3.11 to 3.13: the int <-> bytes conversions use the public
 * PyLong_*NativeBytes functions from 3.13 on, _PyLong_*ByteArray before.
 *
 * Bytes 0x09..0x0D are written as 0x0B followed by (byte + 0x27), i.e.
 * '0'..'4'.  unescape() returns bytes, or, for malformed input, the int byte
 * offset of the first offending byte (the Python side builds the message).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

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

/* The byte the escape sequence at s[at] (a byte in 0x09..0x0D) stands for,
 * or -1 when it is malformed: not the escape byte, the escape byte at the
 * end, or the escape byte followed by anything but 0x30..0x34. */
static inline int
unescaped_byte(const unsigned char *s, Py_ssize_t n, Py_ssize_t at)
{
    if (s[at] != ESC || at + 1 >= n || (unsigned char)(s[at + 1] - (LO + SHIFT)) > (HI - LO))
        return -1;
    return (unsigned char)(s[at + 1] - SHIFT);
}

/* Write the unescaped form of s[0:n] at d (which has SLACK spare bytes beyond
 * n); return the end of what was written, or NULL with *bad set to the offset
 * of the first malformed byte. */
static unsigned char *
unescape_into(unsigned char *d, const unsigned char *s, Py_ssize_t n, Py_ssize_t *bad)
{
    Py_ssize_t i = 0;
    int c;
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
            if ((c = unescaped_byte(s, n, i + k)) < 0) {
                *bad = i + k;
                return NULL;
            }
            *d++ = (unsigned char)c;
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
        if (!needs_escape(s[i])) {
            *d++ = s[i++];
            continue;
        }
        if ((c = unescaped_byte(s, n, i)) < 0) {
            *bad = i;
            return NULL;
        }
        *d++ = (unsigned char)c;
        i += 2;
    }
    return d;
}

/*
 * One pass: validate and copy into a buffer of the input's size, then shrink
 * it.  Returns the new bytes, or the int offset of the first malformed byte:
 * a byte in 0x09..0x0D other than the escape byte, an escape byte at the end,
 * or an escape byte followed by anything but 0x30..0x34.
 */
static PyObject *unescape(PyObject *self, PyObject *arg);

static PyObject *
unescape_or_null(PyObject *arg)
{
    PyObject *r = unescape(NULL, arg);
    if (r != NULL && PyLong_Check(r)) {
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

static PyObject *
unescape(PyObject *self, PyObject *arg)
{
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t n = in.len, bad = -1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n + SLACK);
    if (out == NULL) {
        PyBuffer_Release(&in);
        return NULL;
    }
    unsigned char *d0 = (unsigned char *)PyBytes_AS_STRING(out);
    unsigned char *d = unescape_into(d0, (const unsigned char *)in.buf, n, &bad);
    PyBuffer_Release(&in);
    if (d == NULL) {
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
    Py_ssize_t total = 0, k;
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

static PyObject *uuid_type, *uuid_is_safe, *vector_type;
static PyObject *str_int, *str_is_safe, *str_ids, *str_weights;
static PyArray_Descr *descr_ids, *descr_f64, *descr_f32;

/* mrcodecs.vector.SparseVector (borrowed from our reference), imported on first
 * use.  mrcodecs.vector lies below the twin seam (it imports neither twin), so
 * this is no import circle; importing it on first use spares the module's
 * initialisation a package import of its own. */
static PyObject *
get_vector_type(void)
{
    if (vector_type == NULL) {
        PyObject *m = PyImport_ImportModule("mrcodecs.vector");
        if (m == NULL)
            return NULL;
        vector_type = PyObject_GetAttrString(m, "SparseVector");
        Py_DECREF(m);
    }
    return vector_type;
}

/* The 16 big-endian bytes of a non-negative int below 2**128; -1 otherwise
 * (with an exception set). */
static int
int_to_16_bytes(PyObject *value, unsigned char *out)
{
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t need = PyLong_AsNativeBytes(
        value, out, 16, Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER
                            | Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (need < 0)
        return -1;
    if (need > 16) {
        PyErr_SetString(PyExc_OverflowError, "int too big for 16 bytes");
        return -1;
    }
    return 0;
#else
    return _PyLong_AsByteArray((PyLongObject *)value, out, 16, 0, 0);
#endif
}

static PyObject *
int_from_16_bytes(const unsigned char *in)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(in, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
#else
    return _PyLong_FromByteArray(in, 16, 0, 0);
#endif
}

/*
 * Fast paths for the sparse vector record (SPEC.md 3.2).  Each returns None
 * for anything but the plain case -- a wrong type, a non-contiguous array,
 * malformed input, a non-finite weight -- and the Python code then does the
 * work itself, raising the documented error with its message.
 */
#define KIND_F64 0x01
#define KIND_F32 0x02
#define HEADER_SIZE 5

/* Borrowed-free view of a SparseVector's arrays; 0 when not the plain case. */
static int
vector_arrays(PyObject *vector, PyArrayObject **ids, PyArrayObject **weights, int *kind)
{
    PyObject *vt = get_vector_type();
    if (vt == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (Py_TYPE(vector) != (PyTypeObject *)vt)
        return 0;
    PyObject *i = PyObject_GetAttr(vector, str_ids);
    PyObject *w = i ? PyObject_GetAttr(vector, str_weights) : NULL;
    if (w == NULL) {
        PyErr_Clear();
        Py_XDECREF(i);
        return 0;
    }
    if (!PyArray_CheckExact(i) || !PyArray_CheckExact(w) || PyArray_NDIM((PyArrayObject *)i) != 1
        || PyArray_NDIM((PyArrayObject *)w) != 1
        || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)i) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)w)
        || PyArray_TYPE((PyArrayObject *)i) != NPY_STRING || PyArray_ITEMSIZE((PyArrayObject *)i) != 16
        || PyArray_DIM((PyArrayObject *)i, 0) != PyArray_DIM((PyArrayObject *)w, 0)
        || PyArray_DIM((PyArrayObject *)i, 0) > 0xFFFFFFFFLL
        || !PyArray_ISNOTSWAPPED((PyArrayObject *)w)) {
        Py_DECREF(i);
        Py_DECREF(w);
        return 0;
    }
    int t = PyArray_TYPE((PyArrayObject *)w);
    if (t == NPY_FLOAT64)
        *kind = KIND_F64;
    else if (t == NPY_FLOAT32)
        *kind = KIND_F32;
    else {
        Py_DECREF(i);
        Py_DECREF(w);
        return 0;
    }
    *ids = (PyArrayObject *)i;
    *weights = (PyArrayObject *)w;
    return 1;
}

static int
all_finite(PyArrayObject *w, int kind)
{
    /* Non-finite exactly when the exponent bits are all ones; an OR over
     * integers vectorizes, a float reduction would not. */
    npy_intp n = PyArray_DIM(w, 0), k;
    const unsigned char *p = PyArray_DATA(w);
    if (kind == KIND_F64) {
        uint64_t bad = 0, bits;
        for (k = 0; k < n; k++) {
            memcpy(&bits, p + 8 * k, 8);
            bad |= (bits & 0x7FF0000000000000ULL) == 0x7FF0000000000000ULL;
        }
        return !bad;
    }
    uint32_t bad32 = 0, bits32;
    for (k = 0; k < n; k++) {
        memcpy(&bits32, p + 4 * k, 4);
        bad32 |= (bits32 & 0x7F800000U) == 0x7F800000U;
    }
    return !bad32;
}

/* The 16 big-endian bytes of a uuid.UUID into out; 0 when not a UUID. */
static int
uuid_bytes(PyObject *key, unsigned char *out)
{
    if (!PyObject_TypeCheck(key, (PyTypeObject *)uuid_type))
        return 0;
    PyObject *value = PyObject_GetAttr(key, str_int);
    if (value == NULL || !PyLong_Check(value) || int_to_16_bytes(value, out) < 0) {
        PyErr_Clear();
        Py_XDECREF(value);
        return 0;
    }
    Py_DECREF(value);
    return 1;
}

/* encode_vector_line(key or None, vector, allow_nonfinite) -> bytes or None.
 * With key None, only the escaped value. */
static PyObject *
encode_vector_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3)
        Py_RETURN_NONE;
    PyObject *key = args[0], *vector = args[1];
    int allow_nonfinite = PyObject_IsTrue(args[2]);
    unsigned char key_raw[16], header[HEADER_SIZE];
    PyArrayObject *ids, *w;
    int kind;
    if (allow_nonfinite < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (key != Py_None && !uuid_bytes(key, key_raw))
        Py_RETURN_NONE;
    if (!vector_arrays(vector, &ids, &w, &kind))
        Py_RETURN_NONE;
    if (!allow_nonfinite && !all_finite(w, kind)) {
        Py_DECREF(ids);
        Py_DECREF(w);
        Py_RETURN_NONE;
    }
    npy_intp n = PyArray_DIM(ids, 0);
    header[0] = (unsigned char)kind;
    header[1] = (unsigned char)(n >> 24);
    header[2] = (unsigned char)(n >> 16);
    header[3] = (unsigned char)(n >> 8);
    header[4] = (unsigned char)n;
    const unsigned char *id_bytes = PyArray_DATA(ids), *w_bytes = PyArray_DATA(w);
    Py_ssize_t id_len = 16 * n, w_len = (Py_ssize_t)PyArray_ITEMSIZE(w) * n;
    Py_ssize_t total = HEADER_SIZE + id_len + w_len
        + count_special(header, HEADER_SIZE) + count_special(id_bytes, id_len)
        + count_special(w_bytes, w_len);
    if (key != Py_None)
        total += 17 + count_special(key_raw, 16);
    PyObject *out = PyBytes_FromStringAndSize(NULL, total + SLACK);
    if (out != NULL) {
        unsigned char *d0 = (unsigned char *)PyBytes_AS_STRING(out), *d = d0;
        if (key != Py_None) {
            d = escape_into(d, key_raw, 16);
            *d++ = '\t';
        }
        d = escape_into(d, header, HEADER_SIZE);
        d = escape_into(d, id_bytes, id_len);
        d = escape_into(d, w_bytes, w_len);
        if (_PyBytes_Resize(&out, d - d0) < 0)
            out = NULL;
    }
    Py_DECREF(ids);
    Py_DECREF(w);
    return out;
}

/* Unescape into a new bytes object, or NULL with no error set when malformed. */
static PyObject *
unescape_or_null(PyObject *arg);

/* decode_vector(escaped value) -> SparseVector or None (malformed: the Python
 * decoder then raises the documented error). Arrays view the unescaped bytes. */
static PyObject *
decode_vector(PyObject *self, PyObject *arg)
{
    if (get_vector_type() == NULL)
        return NULL;
    PyObject *raw = unescape_or_null(arg);
    if (raw == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(raw);
    Py_ssize_t size = PyBytes_GET_SIZE(raw);
    PyArray_Descr *wd;
    if (size < HEADER_SIZE || (s[0] != KIND_F64 && s[0] != KIND_F32))
        goto malformed;
    wd = s[0] == KIND_F64 ? descr_f64 : descr_f32;
    npy_intp n = ((npy_intp)s[1] << 24) | ((npy_intp)s[2] << 16) | ((npy_intp)s[3] << 8) | s[4];
    Py_ssize_t end_ids = HEADER_SIZE + 16 * n;
    if (size != end_ids + (Py_ssize_t)PyDataType_ELSIZE(wd) * n)
        goto malformed;
    Py_INCREF(descr_ids);
    PyObject *ids = PyArray_NewFromDescr(&PyArray_Type, descr_ids, 1, &n, NULL,
                                         (void *)(s + HEADER_SIZE), 0, NULL);
    if (ids == NULL || PyArray_SetBaseObject((PyArrayObject *)ids, Py_NewRef(raw)) < 0) {
        Py_XDECREF(ids);
        Py_DECREF(raw);
        return NULL;
    }
    Py_INCREF(wd);
    PyObject *w = PyArray_NewFromDescr(&PyArray_Type, wd, 1, &n, NULL,
                                       (void *)(s + end_ids), 0, NULL);
    if (w == NULL || PyArray_SetBaseObject((PyArrayObject *)w, Py_NewRef(raw)) < 0) {
        Py_XDECREF(w);
        Py_DECREF(ids);
        Py_DECREF(raw);
        return NULL;
    }
    Py_DECREF(raw);
    PyTypeObject *tp = (PyTypeObject *)vector_type;
    PyObject *v = tp->tp_alloc(tp, 0);
    if (v == NULL || PyObject_GenericSetAttr(v, str_ids, ids) < 0
        || PyObject_GenericSetAttr(v, str_weights, w) < 0) {
        Py_XDECREF(v);
        v = NULL;
    }
    Py_DECREF(ids);
    Py_DECREF(w);
    return v;
malformed:
    Py_DECREF(raw);
    Py_RETURN_NONE;
}

/* uuid_from_bytes(b16) -> uuid.UUID, as UUID(bytes=b16) without its checks. */
static PyObject *
uuid_from_bytes(PyObject *self, PyObject *arg)
{
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    if (in.len != 16) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "uuid_from_bytes needs 16 bytes");
        return NULL;
    }
    PyObject *value = int_from_16_bytes(in.buf);
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

/*
 * The feature places of an indexed block record (codecs/SPEC.md 3.4): each
 * vector's first place, then each place minus the one before, as LEB128
 * varints.  Both take C-contiguous uint32 buffers (native order, as numpy
 * gives them); malformed input gives None, and the Python side raises.
 */
static int
get_u32(PyObject *obj, Py_buffer *view)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format;
    const uint16_t one = 1;
    if (f != NULL && (f[0] == '=' || f[0] == '@' || (f[0] == '<' && *(const char *)&one)))
        f++;  /* (the machine's own order) */
    if (view->itemsize != 4 || f == NULL || (strcmp(f, "I") != 0 && strcmp(f, "L") != 0)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a C-contiguous uint32 buffer");
        return -1;
    }
    return 0;
}

/* encode_places(places, lengths) -> bytes, or None if a vector's places do
 * not ascend or the lengths do not add up to the places */
static PyObject *
encode_places(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode_places(places, lengths)");
        return NULL;
    }
    Py_buffer pv, lv;
    if (get_u32(args[0], &pv) < 0)
        return NULL;
    if (get_u32(args[1], &lv) < 0) {
        PyBuffer_Release(&pv);
        return NULL;
    }
    const uint32_t *pl = pv.buf, *len = lv.buf;
    Py_ssize_t n = pv.len / 4, nv = lv.len / 4, at = 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, 5 * n);
    if (out == NULL)
        goto done;
    unsigned char *d0 = (unsigned char *)PyBytes_AS_STRING(out), *d = d0;
    for (Py_ssize_t v = 0; v < nv; v++) {
        if ((Py_ssize_t)len[v] > n - at)
            goto malformed;
        uint32_t prev = 0;
        for (Py_ssize_t i = at, end = at + len[v]; i < end; i++) {
            if (i > at && pl[i] <= prev)
                goto malformed;
            uint32_t x = pl[i] - prev;
            prev = pl[i];
            while (x >= 0x80) {
                *d++ = (unsigned char)(x | 0x80);
                x >>= 7;
            }
            *d++ = (unsigned char)x;
        }
        at += len[v];
    }
    if (at != n)
        goto malformed;
    if (_PyBytes_Resize(&out, d - d0) < 0)
        out = NULL;
    goto done;
malformed:
    Py_DECREF(out);
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&pv);
    PyBuffer_Release(&lv);
    return out;
}

/* decode_places(data, lengths) -> the places as uint32 bytes (native order),
 * or None: not one varint an entry, a varint of more than 5 bytes, a place
 * past 2**32, or a difference of 0 after a vector's first place */
static PyObject *
decode_places(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "decode_places(data, lengths)");
        return NULL;
    }
    Py_buffer dv, lv;
    if (PyObject_GetBuffer(args[0], &dv, PyBUF_SIMPLE) < 0)
        return NULL;
    if (get_u32(args[1], &lv) < 0) {
        PyBuffer_Release(&dv);
        return NULL;
    }
    const unsigned char *s = dv.buf, *e = s + dv.len;
    const uint32_t *len = lv.buf;
    Py_ssize_t nv = lv.len / 4, n = 0;
    for (Py_ssize_t v = 0; v < nv; v++)
        n += len[v];
    PyObject *out = NULL;
    if (n > dv.len)  /* (a varint takes a byte at least) */
        goto malformed;
    out = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (out == NULL)
        goto done;
    uint32_t *o = (uint32_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t v = 0; v < nv; v++) {
        uint64_t place = 0;
        for (uint32_t i = 0; i < len[v]; i++) {
            uint64_t x = 0;
            int shift = 0;
            for (;;) {
                if (s == e || shift > 28)
                    goto malformed;
                unsigned char b = *s++;
                x |= (uint64_t)(b & 0x7F) << shift;
                shift += 7;
                if (b < 0x80)
                    break;
            }
            if (i > 0 && x == 0)
                goto malformed;
            place += x;
            if (place > 0xFFFFFFFFu)
                goto malformed;
            *o++ = (uint32_t)place;
        }
    }
    if (s != e)
        goto malformed;
    goto done;
malformed:
    Py_XDECREF(out);
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&dv);
    PyBuffer_Release(&lv);
    return out;
}

static PyMethodDef methods[] = {
    {"escape_line", (PyCFunction)(void (*)(void))escape_line, METH_FASTCALL,
     "escape_line(key, *value_parts): escaped key, TAB, escaped concatenated value."},
    {"encode_vector_line", (PyCFunction)(void (*)(void))encode_vector_line, METH_FASTCALL,
     "encode_vector_line(key or None, vector, allow_nonfinite) -> bytes, or None if not plain."},
    {"decode_vector", decode_vector, METH_O,
     "decode_vector(escaped) -> SparseVector, or None if malformed."},
    {"uuid_from_bytes", uuid_from_bytes, METH_O, "uuid.UUID from exactly 16 bytes."},
    {"encode_places", (PyCFunction)(void (*)(void))encode_places, METH_FASTCALL,
     "encode_places(places, lengths) -> varints of the places' differences, or None."},
    {"decode_places", (PyCFunction)(void (*)(void))decode_places, METH_FASTCALL,
     "decode_places(data, lengths) -> the places as uint32 bytes, or None if malformed."},
    {"escape", escape, METH_O, "Escape bytes 0x09..0x0D (see codecs/SPEC.md)."},
    {"unescape", unescape, METH_O,
     "Undo escape(); return the bytes, or the int offset of the first malformed byte."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mrcodecs_speedups", "C twin of mrcodecs._pyimpl (see mrcodecs._impl).", -1, methods
};

PyMODINIT_FUNC
PyInit__mrcodecs_speedups(void)
{
    import_array();
    str_int = PyUnicode_InternFromString("int");
    str_is_safe = PyUnicode_InternFromString("is_safe");
    str_ids = PyUnicode_InternFromString("ids");
    str_weights = PyUnicode_InternFromString("weights");
    if (str_int == NULL || str_is_safe == NULL || str_ids == NULL || str_weights == NULL)
        return NULL;
    descr_ids = PyArray_DescrNewFromType(NPY_STRING);
    if (descr_ids == NULL)
        return NULL;
    PyDataType_SET_ELSIZE(descr_ids, 16);
    descr_f64 = PyArray_DescrFromType(NPY_FLOAT64);
    descr_f32 = PyArray_DescrFromType(NPY_FLOAT32);
    if (descr_f64 == NULL || descr_f32 == NULL)
        return NULL;
    PyObject *uuid_mod = PyImport_ImportModule("uuid");
    if (uuid_mod == NULL)
        return NULL;
    uuid_type = PyObject_GetAttrString(uuid_mod, "UUID");
    PyObject *safe = PyObject_GetAttrString(uuid_mod, "SafeUUID");
    Py_DECREF(uuid_mod);
    if (uuid_type == NULL || safe == NULL) {
        Py_XDECREF(safe);
        return NULL;
    }
    uuid_is_safe = PyObject_GetAttrString(safe, "unknown");
    Py_DECREF(safe);
    if (uuid_is_safe == NULL)
        return NULL;
    return PyModule_Create(&module);
}
