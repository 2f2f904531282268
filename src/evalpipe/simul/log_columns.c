/* evalpipe.simul._log_columns: the fields evalpipe reads from a SimulEval log (instances.log, JSON lines), read
 * straight from the file's bytes, built at install when a C compiler is there (setup.py, optional=True; without
 * it src/evalpipe/simul/log_columns.py, the Python reference, gives the same columns).
 *
 * columns(data, first_line) -> (lines, delays, source_lengths, predictions, references, elapsed, server_delays,
 * indices, kinds, checked), or None where the bytes hold anything this reader does not take (then evalpipe parses
 * them with json, which also names what is wrong).  data: whole lines of the log, the first being line first_line;
 * '\n' ends a line and blank lines (spaces, tabs, '\r') are no record.  Every other line must be one JSON object
 * (RFC 8259: strict UTF-8, no control characters in strings, no NaN or Infinity, no \u surrogate escape outside
 * a pair), with
 *   delays          a list of numbers                       (required)
 *   source_length   a number                                (required; given as a float)
 *   prediction      a string or null                        reference     a string or null
 *   elapsed         a list of numbers or null               server_delays a list of numbers or null
 *   durations       null                                    index         an integer or null
 *   source          anything: kinds[i] is "text" for a string, "speech" for a list holding a string that starts
 *                   with "samplerate:", else None
 * each at most once (absent: None); other keys may hold any JSON value nested at most 512 deep.  Integers have
 * at most 18 digits where they are kept (they become Python ints, other numbers floats, as json.loads makes
 * them); a float is read by PyOS_string_to_double, as float() reads it.  checked: every source length is finite and 0 or more, and every
 * record's delays are finite and non-decreasing (compared as doubles).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DECLINE 1 /* the bytes hold something this reader does not take: the caller parses them with json */
#define FAILED 2  /* a Python error is set (memory) */
#define MAX_DEPTH 512
#define NEW_NONE() (Py_INCREF(Py_None), Py_None) /* (Py_NewRef is 3.10 on) */

typedef struct {
    const unsigned char *p, *end; /* the rest of the current line */
    char *buf;                    /* a decoded string, UTF-8 */
    Py_ssize_t len, cap;
} Reader;

static int
ws(Reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r')) {
        r->p++;
    }
    return r->p < r->end;
}

static int
put(Reader *r, const void *bytes, Py_ssize_t n)
{
    if (r->len + n > r->cap) {
        Py_ssize_t cap = (r->len + n) * 2 + 64;
        char *grown = PyMem_Realloc(r->buf, cap);
        if (!grown) {
            PyErr_NoMemory();
            return FAILED;
        }
        r->buf = grown;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, bytes, n);
    r->len += n;
    return 0;
}

/* the length of the strict UTF-8 sequence at p (a lead byte >= 0x80), 0 if it is not one */
static int
utf8_length(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (end - p < n || p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (int i = 2; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) {
            return 0;
        }
    }
    return n;
}

static int
hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
    if (end - p < 4) {
        return -1;
    }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    *out = v;
    return 0;
}

/* the string at r->p (its opening quote), checked; decoded into r->buf when keep (r->len: its length) */
static int
string(Reader *r, int keep)
{
    r->p++;
    r->len = 0;
    for (;;) {
        const unsigned char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && *r->p >= 0x20 && *r->p < 0x80) {
            r->p++;
        }
        if (keep && r->p > run && put(r, run, r->p - run)) {
            return FAILED;
        }
        if (r->p >= r->end || *r->p < 0x20) {
            return DECLINE; /* an unterminated string or a control character */
        }
        unsigned char c = *r->p;
        if (c == '"') {
            r->p++;
            return 0;
        }
        if (c >= 0x80) {
            int n = utf8_length(r->p, r->end);
            if (!n) {
                return DECLINE;
            }
            if (keep && put(r, r->p, n)) {
                return FAILED;
            }
            r->p += n;
            continue;
        }
        /* a backslash */
        if (r->end - r->p < 2) {
            return DECLINE;
        }
        unsigned char e = r->p[1];
        char out;
        switch (e) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case 'u': {
            unsigned cp, low;
            if (hex4(r->p + 2, r->end, &cp)) {
                return DECLINE;
            }
            r->p += 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return DECLINE; /* a lone low surrogate */
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || hex4(r->p + 2, r->end, &low)
                    || low < 0xDC00 || low > 0xDFFF) {
                    return DECLINE; /* a lone high surrogate */
                }
                r->p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            if (keep) {
                unsigned char u[4];
                int n;
                if (cp < 0x80) { u[0] = (unsigned char)cp; n = 1; }
                else if (cp < 0x800) { u[0] = 0xC0 | (cp >> 6); u[1] = 0x80 | (cp & 0x3F); n = 2; }
                else if (cp < 0x10000) {
                    u[0] = 0xE0 | (cp >> 12); u[1] = 0x80 | ((cp >> 6) & 0x3F); u[2] = 0x80 | (cp & 0x3F); n = 3;
                } else {
                    u[0] = 0xF0 | (cp >> 18); u[1] = 0x80 | ((cp >> 12) & 0x3F); u[2] = 0x80 | ((cp >> 6) & 0x3F);
                    u[3] = 0x80 | (cp & 0x3F); n = 4;
                }
                if (put(r, u, n)) {
                    return FAILED;
                }
            }
            continue;
        }
        default:
            return DECLINE;
        }
        if (keep && put(r, &out, 1)) {
            return FAILED;
        }
        r->p += 2;
    }
}

/* the number at r->p: *is_int and *ival (when it has at most 18 digits: *fits) or *dval */
static int
number(Reader *r, int *is_int, int *fits, long long *ival, double *dval)
{
    const unsigned char *start = r->p, *p = r->p;
    int negative = p < r->end && *p == '-';
    p += negative;
    if (p >= r->end || *p < '0' || *p > '9') return DECLINE;
    long long value = 0;
    const unsigned char *digits = p;
    if (*p == '0') p++;
    else while (p < r->end && *p >= '0' && *p <= '9') {
        if (p - digits < 18) value = value * 10 + (*p - '0');
        p++;
    }
    *fits = p - digits <= 18;
    *is_int = 1;
    if (p < r->end && *p == '.') {
        p++;
        if (p >= r->end || *p < '0' || *p > '9') return DECLINE;
        while (p < r->end && *p >= '0' && *p <= '9') p++;
        *is_int = 0;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < r->end && (*p == '+' || *p == '-')) p++;
        if (p >= r->end || *p < '0' || *p > '9') return DECLINE;
        while (p < r->end && *p >= '0' && *p <= '9') p++;
        *is_int = 0;
    }
    r->p = p;
    if (*is_int) {
        *ival = negative ? -value : value;
        return 0;
    }
    char small[64];
    Py_ssize_t n = p - start;
    char *text = n < (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc(n + 1);
    if (!text) {
        PyErr_NoMemory();
        return FAILED;
    }
    memcpy(text, start, n);
    text[n] = 0;
    int status = 0;
    *dval = PyOS_string_to_double(text, NULL, NULL); /* as float(): an overflow is +-inf */
    if (*dval == -1.0 && PyErr_Occurred()) {
        status = FAILED;
    }
    if (text != small) {
        PyMem_Free(text);
    }
    return status;
}

static int literal(Reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n)) {
        return DECLINE;
    }
    r->p += n;
    return 0;
}

/* any JSON value at r->p, checked and passed over */
static int
skip(Reader *r, int depth)
{
    if (depth > MAX_DEPTH || !ws(r)) {
        return DECLINE;
    }
    int status, is_int, fits;
    long long ival;
    double dval;
    switch (*r->p) {
    case '"':
        return string(r, 0);
    case 't':
        return literal(r, "true");
    case 'f':
        return literal(r, "false");
    case 'n':
        return literal(r, "null");
    case '[':
    case '{': {
        unsigned char close = *r->p == '[' ? ']' : '}';
        int object = close == '}';
        r->p++;
        if (!ws(r)) return DECLINE;
        if (*r->p == close) {
            r->p++;
            return 0;
        }
        for (;;) {
            if (object) {
                if (!ws(r) || *r->p != '"') return DECLINE;
                if ((status = string(r, 0))) return status;
                if (!ws(r) || *r->p != ':') return DECLINE;
                r->p++;
            }
            if ((status = skip(r, depth + 1))) return status;
            if (!ws(r)) return DECLINE;
            if (*r->p == ',') {
                r->p++;
                continue;
            }
            if (*r->p == close) {
                r->p++;
                return 0;
            }
            return DECLINE;
        }
    }
    default:
        return number(r, &is_int, &fits, &ival, &dval);
    }
}

/* a list of numbers at r->p as a Python list (ints and floats); *ordered: all finite and non-decreasing */
static int
numbers(Reader *r, PyObject **out, int *ordered)
{
    if (*r->p != '[') return DECLINE;
    r->p++;
    PyObject *list = PyList_New(0);
    if (!list) return FAILED;
    int status = 0, is_int, fits;
    long long ival;
    double dval, last = -INFINITY;
    *ordered = 1;
    if (!ws(r)) { status = DECLINE; goto done; }
    if (*r->p == ']') {
        r->p++;
        goto done;
    }
    for (;;) {
        if (!ws(r)) { status = DECLINE; goto done; }
        if ((status = number(r, &is_int, &fits, &ival, &dval))) goto done;
        if (is_int && !fits) { status = DECLINE; goto done; }
        double value = is_int ? (double)ival : dval;
        if (!isfinite(value) || value < last) *ordered = 0;
        last = value;
        PyObject *item = is_int ? PyLong_FromLongLong(ival) : PyFloat_FromDouble(dval);
        if (!item || PyList_Append(list, item)) {
            Py_XDECREF(item);
            status = FAILED;
            goto done;
        }
        Py_DECREF(item);
        if (!ws(r)) { status = DECLINE; goto done; }
        if (*r->p == ',') { r->p++; continue; }
        if (*r->p == ']') { r->p++; break; }
        status = DECLINE;
        goto done;
    }
done:
    if (status) {
        Py_DECREF(list);
        return status;
    }
    *out = list;
    return 0;
}

enum { DELAYS, SOURCE_LENGTH, PREDICTION, REFERENCE, ELAPSED, SERVER, DURATIONS, INDEX, SOURCE, FIELDS };
static const char *NAMES[FIELDS] = {"delays", "source_length", "prediction", "reference", "elapsed",
                                    "server_delays", "durations", "index", "source"};
#define COLUMNS 10 /* lines, delays, source_lengths, predictions, references, elapsed, server, indices, kinds, checked */

/* a string or null at r->p: a Python str or None */
static int
text_or_none(Reader *r, PyObject **out)
{
    if (*r->p == 'n') {
        int status = literal(r, "null");
        if (!status) *out = NEW_NONE();
        return status;
    }
    if (*r->p != '"') return DECLINE;
    int status = string(r, 1);
    if (status) return status;
    *out = PyUnicode_DecodeUTF8(r->buf, r->len, NULL);
    return *out ? 0 : FAILED;
}

static int
kind_of_source(Reader *r, PyObject **out)
{
    int status;
    if (*r->p == '"') {
        if ((status = string(r, 0))) return status;
        *out = PyUnicode_FromString("text");
        return *out ? 0 : FAILED;
    }
    if (*r->p != '[') {
        if ((status = skip(r, 1))) return status;
        *out = NEW_NONE();
        return 0;
    }
    int speech = 0;
    r->p++;
    if (!ws(r)) return DECLINE;
    if (*r->p == ']') {
        r->p++;
    } else {
        for (;;) {
            if (!ws(r)) return DECLINE;
            if (*r->p == '"') {
                if ((status = string(r, 1))) return status;
                speech |= r->len >= 11 && memcmp(r->buf, "samplerate:", 11) == 0;
            } else if ((status = skip(r, 2))) {
                return status;
            }
            if (!ws(r)) return DECLINE;
            if (*r->p == ',') { r->p++; continue; }
            if (*r->p == ']') { r->p++; break; }
            return DECLINE;
        }
    }
    *out = speech ? PyUnicode_FromString("speech") : NEW_NONE();
    return *out ? 0 : FAILED;
}

/* one record's fields (values[FIELDS], new references or NULL) from the object at r->p */
static int
record(Reader *r, PyObject **values, int *checked)
{
    int status, is_int, fits, ordered;
    long long ival;
    double dval;
    r->p++; /* { */
    if (!ws(r)) return DECLINE;
    if (*r->p == '}') return DECLINE; /* no delays */
    for (;;) {
        if (!ws(r) || *r->p != '"') return DECLINE;
        if ((status = string(r, 1))) return status;
        int field = FIELDS;
        for (int f = 0; f < FIELDS; f++) {
            if ((size_t)r->len == strlen(NAMES[f]) && memcmp(r->buf, NAMES[f], r->len) == 0) {
                field = f;
                break;
            }
        }
        if (!ws(r) || *r->p != ':') return DECLINE;
        r->p++;
        if (!ws(r)) return DECLINE;
        if (field < FIELDS && values[field]) return DECLINE; /* given twice */
        switch (field) {
        case DELAYS:
            if ((status = numbers(r, &values[DELAYS], &ordered))) return status;
            *checked &= ordered;
            break;
        case SERVER:
        case ELAPSED:
            if (*r->p == 'n') {
                if ((status = literal(r, "null"))) return status;
                values[field] = NEW_NONE();
            } else if ((status = numbers(r, &values[field], &ordered))) {
                return status;
            }
            break;
        case SOURCE_LENGTH:
            if ((status = number(r, &is_int, &fits, &ival, &dval))) return status;
            if (is_int && !fits) return DECLINE;
            dval = is_int ? (double)ival : dval;
            if (!(isfinite(dval) && dval >= 0)) *checked = 0;
            if (!(values[field] = PyFloat_FromDouble(dval))) return FAILED;
            break;
        case PREDICTION:
        case REFERENCE:
            if ((status = text_or_none(r, &values[field]))) return status;
            break;
        case DURATIONS:
            if ((status = literal(r, "null"))) return status;
            values[field] = NEW_NONE();
            break;
        case INDEX:
            if (*r->p == 'n') {
                if ((status = literal(r, "null"))) return status;
                values[field] = NEW_NONE();
                break;
            }
            if ((status = number(r, &is_int, &fits, &ival, &dval))) return status;
            if (!is_int || !fits) return DECLINE;
            if (!(values[field] = PyLong_FromLongLong(ival))) return FAILED;
            break;
        case SOURCE:
            if ((status = kind_of_source(r, &values[field]))) return status;
            break;
        default:
            if ((status = skip(r, 1))) return status;
        }
        if (!ws(r)) return DECLINE;
        if (*r->p == ',') { r->p++; continue; }
        if (*r->p == '}') { r->p++; break; }
        return DECLINE;
    }
    if (!values[DELAYS] || !values[SOURCE_LENGTH]) return DECLINE;
    return ws(r) ? DECLINE : 0; /* nothing after the object on its line */
}

static PyObject *
columns(PyObject *Py_UNUSED(self), PyObject *args)
{
    Py_buffer data;
    Py_ssize_t first_line;
    if (!PyArg_ParseTuple(args, "y*n", &data, &first_line)) {
        return NULL;
    }
    PyObject *cols[COLUMNS - 1] = {NULL};
    PyObject *values[FIELDS] = {NULL};
    Reader r = {NULL, NULL, NULL, 0, 0};
    int status = 0, checked = 1;
    for (int c = 0; c < COLUMNS - 1; c++) {
        if (!(cols[c] = PyList_New(0))) { status = FAILED; goto done; }
    }
    const unsigned char *pos = data.buf, *end = pos + data.len;
    Py_ssize_t line = first_line;
    /* the columns after lines, in values' order: delays, source_length, prediction, reference, elapsed,
       server_delays, index, source's kind (durations is always None and not returned) */
    static const int order[8] = {DELAYS, SOURCE_LENGTH, PREDICTION, REFERENCE, ELAPSED, SERVER, INDEX, SOURCE};
    while (pos < end) {
        const unsigned char *nl = memchr(pos, '\n', end - pos);
        r.p = pos;
        r.end = nl ? nl : end;
        if (ws(&r)) {
            if (*r.p != '{') { status = DECLINE; goto done; }
            if ((status = record(&r, values, &checked))) goto done;
            PyObject *number = PyLong_FromSsize_t(line);
            if (!number || PyList_Append(cols[0], number)) { Py_XDECREF(number); status = FAILED; goto done; }
            Py_DECREF(number);
            for (int c = 0; c < 8; c++) {
                PyObject *v = values[order[c]] ? values[order[c]] : Py_None;
                if (PyList_Append(cols[c + 1], v)) { status = FAILED; goto done; }
            }
            for (int f = 0; f < FIELDS; f++) Py_CLEAR(values[f]);
        }
        line++;
        pos = nl ? nl + 1 : end;
    }
done:
    for (int f = 0; f < FIELDS; f++) Py_CLEAR(values[f]);
    PyMem_Free(r.buf);
    PyBuffer_Release(&data);
    if (status) {
        for (int c = 0; c < COLUMNS - 1; c++) Py_XDECREF(cols[c]);
        if (status == FAILED) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *out = PyTuple_New(COLUMNS);
    if (!out) {
        for (int c = 0; c < COLUMNS - 1; c++) Py_XDECREF(cols[c]);
        return NULL;
    }
    for (int c = 0; c < COLUMNS - 1; c++) PyTuple_SET_ITEM(out, c, cols[c]);
    PyTuple_SET_ITEM(out, COLUMNS - 1, PyBool_FromLong(checked));
    return out;
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_VARARGS,
     "columns(data, first_line): the fields of a SimulEval log's records, or None (see log_columns.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_log_columns", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__log_columns(void)
{
    return PyModule_Create(&module);
}
