/*
 * The JSON input: the common form of an input line parsed in one pass
 * (parse_json_line), its features sorted where that is all the line needs
 * (parse_json_sorted); any other line is the callers' general parser's.
 */
#include "speedups.h"

/*
 * parse_json_line(line bytes) -> (doc bytes, ids bytes, weights bytearray) or None
 *
 * The common JSON input line, parsed in one pass: {"id": "<uuid>",
 * "features": {"<uuid>": <number>, ...}} (the two keys in either order,
 * JSON's blanks anywhere between tokens and around the object, UUIDs in
 * their canonical 36-character form, numbers as JSON writes them).  The
 * vector's 16 id bytes, its features' 16 bytes each in input order and their
 * weights as float64 -- what mrjobs.parsing's own parser gives: numbers are
 * read by the function float() uses (correctly rounded), an integer as
 * float(int(...)) (so -0 is 0.0).  None for anything else -- another form of
 * UUID, an escape in a string, a byte beyond ASCII, another key, a weight
 * that is not finite, a malformed line --, which the caller parses the
 * general way, with its error messages.
 */
static inline const char *
skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static inline int
hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* a quoted canonical UUID at p into out (16 bytes); the end of the closing
 * quote, or NULL */
static const char *
quoted_uuid(const char *p, const char *end, unsigned char *out)
{
    if (end - p < 38 || p[0] != '"' || p[37] != '"')
        return NULL;
    p++;
    int b = 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (p[i] != '-')
                return NULL;
            continue;
        }
        int hi = hex_value(p[i]), lo = hex_value(p[i + 1]);
        if (hi < 0 || lo < 0)
            return NULL;
        out[b++] = (unsigned char)(hi << 4 | lo);
        i++;
    }
    return p + 37;
}

/* a JSON number at p: its double in *v (an integer's as float(int)); the
 * end of the number, or NULL (not a JSON number, or not finite) */
static const char *
json_number(const char *p, const char *end, double *v)
{
    const char *s = p;
    int integer = 1;
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return NULL;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (p < end && *p == '.') {
        integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    char buf[64];
    if (p - s >= (Py_ssize_t)sizeof(buf))
        return NULL;  /* long numbers: the general way */
    memcpy(buf, s, p - s);
    buf[p - s] = '\0';
    char *stop;
    double x = PyOS_string_to_double(buf, &stop, NULL);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (stop != buf + (p - s) || !isfinite(x))
        return NULL;
    if (integer && x == 0.0)
        x = 0.0;  /* int("-0") is 0 */
    *v = x;
    return p;
}

/* a key '"name"' (len bytes with its quotes) at p, blanks and ':': the
 * place after the colon, or NULL */
static inline const char *
key_colon(const char *p, const char *end, const char *name, Py_ssize_t len)
{
    if (end - p < len || memcmp(p, name, len) != 0)
        return NULL;
    p = skip_blank(p + len, end);
    if (p >= end || *p++ != ':')
        return NULL;
    return p;
}

/* Room for one more feature in *ids (16 bytes each) and *w, *cap of them:
 * doubled when full; -1 out of memory */
static int
feature_room(unsigned char **ids, double **w, Py_ssize_t n, Py_ssize_t *cap)
{
    if (n < *cap)
        return 0;
    Py_ssize_t grown = *cap ? 2 * *cap : 64;
    unsigned char *ni = PyMem_Realloc(*ids, grown * 16);
    if (!ni)
        return -1;
    *ids = ni;
    double *nw = PyMem_Realloc(*w, grown * sizeof(double));
    if (!nw)
        return -1;
    *w = nw;
    *cap = grown;
    return 0;
}

/* The features' object at p, {"<uuid>": <number>, ...}, appended to *ids
 * and *w (*n of them, in *cap slots): the end of the object, or NULL where
 * it is not of the common form, or out of memory (*nomem set) */
static const char *
features_object(const char *p, const char *end, unsigned char **ids, double **w,
                Py_ssize_t *n, Py_ssize_t *cap, int *nomem)
{
    if (p >= end || *p++ != '{')
        return NULL;
    p = skip_blank(p, end);
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        if (feature_room(ids, w, *n, cap) < 0) {
            *nomem = 1;
            return NULL;
        }
        p = quoted_uuid(p, end, *ids + 16 * *n);
        if (!p)
            return NULL;
        p = skip_blank(p, end);
        if (p >= end || *p++ != ':')
            return NULL;
        p = json_number(skip_blank(p, end), end, *w + *n);
        if (!p)
            return NULL;
        ++*n;
        p = skip_blank(p, end);
        if (p < end && *p == ',') {
            p = skip_blank(p + 1, end);
            continue;
        }
        if (p < end && *p == '}')
            return p + 1;
        return NULL;
    }
}

/* The common JSON line of view parsed into doc, *ids (16 bytes each) and *w
 * (n of them, PyMem buffers the caller frees): 1; 0 for any other line; -1
 * out of memory. */
static int
parse_common(const Py_buffer *view, unsigned char *doc, unsigned char **ids_out,
             double **w_out, Py_ssize_t *n_out)
{
    const char *p = view->buf, *end = p + view->len, *q;
    Py_ssize_t cap = 0;
    int have_id = 0, have_features = 0, nomem = 0;
    *ids_out = NULL;
    *w_out = NULL;
    *n_out = 0;
    for (q = p; q < end; q++)
        if ((unsigned char)*q >= 0x80)
            return 0;  /* UTF-8 beyond ASCII: the general way */
    p = skip_blank(p, end);
    if (p >= end || *p++ != '{')
        return 0;
    for (int key = 0; key < 2; key++) {
        p = skip_blank(p, end);
        if (key) {
            if (p >= end || *p++ != ',')
                return 0;
            p = skip_blank(p, end);
        }
        if (!have_id && (q = key_colon(p, end, "\"id\"", 4))) {
            p = quoted_uuid(skip_blank(q, end), end, doc);
            have_id = 1;
        }
        else if (!have_features && (q = key_colon(p, end, "\"features\"", 10))) {
            p = features_object(skip_blank(q, end), end, ids_out, w_out, n_out, &cap,
                                &nomem);
            have_features = 1;
        }
        else
            return 0;
        if (!p)
            return nomem ? -1 : 0;
    }
    p = skip_blank(p, end);
    if (p >= end || *p++ != '}')
        return 0;
    return skip_blank(p, end) == end;
}

typedef struct {
    unsigned char id[16];
    double w;
} Entry;

static int
entry_cmp(const void *x, const void *y)
{
    return memcmp(((const Entry *)x)->id, ((const Entry *)y)->id, 16);
}

/*
 * A parsed line's features in UUID order, in place: 1; 0 if the line needs
 * more than that (no feature, one twice, a weight 0), -1 out of memory.
 */
static int
sort_features(unsigned char *ids, double *w, Py_ssize_t n)
{
    if (n < 1)
        return 0;
    Entry *e = PyMem_Malloc(n * sizeof(Entry));
    if (!e)
        return -1;
    int ok = 1;
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        ok = w[i] != 0.0;
        memcpy(e[i].id, ids + 16 * i, 16);
        e[i].w = w[i];
    }
    if (ok)
        qsort(e, n, sizeof(Entry), entry_cmp);
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        ok = !(i && memcmp(e[i - 1].id, e[i].id, 16) == 0);
        memcpy(ids + 16 * i, e[i].id, 16);
        w[i] = e[i].w;
    }
    PyMem_Free(e);
    return ok;
}

/* parse_json_line (sort 0) and parse_json_sorted (sort 1) */
static PyObject *
parse_line(PyObject *arg, int sort)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    unsigned char doc[16], *ids;
    double *w;
    Py_ssize_t n;
    int ok = parse_common(&view, doc, &ids, &w, &n);
    if (ok > 0 && sort)
        ok = sort_features(ids, w, n);
    PyObject *result = NULL;
    if (ok < 0)
        PyErr_NoMemory();
    else if (!ok)
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("(y#y#N)", (const char *)doc, (Py_ssize_t)16,
                               (const char *)(ids ? (const char *)ids : ""), 16 * n,
                               PyByteArray_FromStringAndSize((const char *)w,
                                                             n * (Py_ssize_t)sizeof(double)));
    PyMem_Free(ids);
    PyMem_Free(w);
    PyBuffer_Release(&view);
    return result;
}

PyObject *
parse_json_line(PyObject *self, PyObject *arg)
{
    return parse_line(arg, 0);
}

/*
 * parse_json_sorted(line bytes) -> (doc bytes, ids bytes, weights bytearray) or None
 *
 * parse_json_line, then the features in UUID order, for a line that needs no
 * more than that: at least one feature, none twice, no weight 0.  Such a
 * line's vector is the one the jobs make of it (sorted, repeats summed, zeros
 * dropped: here nothing to sum or drop); None for any other line.
 */
PyObject *
parse_json_sorted(PyObject *self, PyObject *arg)
{
    return parse_line(arg, 1);
}
