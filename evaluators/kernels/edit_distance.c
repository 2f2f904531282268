/* evalpipe.evaluators.kernels._edit_distance: the Levenshtein distance of many word-id sequence pairs in C, built
 * at install when a C compiler is there (setup.py, optional=True; without it evaluators/kernels/edit_distance.py,
 * the Python reference, gives the same integers).
 *
 * word_ids(lines, mode) -> (bytes of int64 ids, bytes of int64 counts): every line's words end to end, each word
 * given the id of its first appearance in the call (exact: words are compared code point by code point; the
 * hash only finds the candidates), and each line's word count.  mode 0 is str.split() (any run of whitespace
 * separates); mode 1 is jiwer 4.0.0's default transform (a run of two or more whitespace characters, or one
 * space, separates; whitespace at either end goes; a lone tab or no-break space inside a line stays in its word).
 * Whitespace is Py_UNICODE_ISSPACE, Python's own (str.split, str.strip and re's \s use it).
 *
 * distances(hyp_ids, hyp_offsets, ref_ids, ref_offsets) -> bytes holding n int64 distances: pair k is
 * hyp_ids[hyp_offsets[k]:hyp_offsets[k+1]] against ref_ids[ref_offsets[k]:ref_offsets[k+1]]; insertion, deletion
 * and substitution cost 1 (WER's edit count, as editdistance and rapidfuzz's Levenshtein count it).  One row of
 * the dynamic programme per pair, min(H, R) + 1 cells.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

#include "int64_buffer.h"

typedef int64_t i64;

static i64
distance(const i64 *a, Py_ssize_t n, const i64 *b, Py_ssize_t m, i64 *row)
{
    if (n < m) { /* the row runs over the shorter sequence */
        const i64 *t = a; a = b; b = t;
        Py_ssize_t s = n; n = m; m = s;
    }
    for (Py_ssize_t j = 0; j <= m; j++) {
        row[j] = j;
    }
    for (Py_ssize_t i = 1; i <= n; i++) {
        i64 diag = row[0];
        row[0] = i;
        i64 ai = a[i - 1];
        for (Py_ssize_t j = 1; j <= m; j++) {
            i64 up = row[j];
            i64 best = diag + (ai != b[j - 1]);
            if (up + 1 < best) {
                best = up + 1;
            }
            if (row[j - 1] + 1 < best) {
                best = row[j - 1] + 1;
            }
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

typedef struct {
    uint64_t hash;
    i64 id;
    PyObject *line; /* borrowed from the list */
    Py_ssize_t start, len;
} Slot;

typedef struct {
    Slot *slots;
    size_t mask, used;
} Table;

static int
same_word(PyObject *a, Py_ssize_t sa, PyObject *b, Py_ssize_t sb, Py_ssize_t len)
{
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    const void *da = PyUnicode_DATA(a), *db = PyUnicode_DATA(b);
    for (Py_ssize_t i = 0; i < len; i++) {
        if (PyUnicode_READ(ka, da, sa + i) != PyUnicode_READ(kb, db, sb + i)) {
            return 0;
        }
    }
    return 1;
}

static int
grow(Table *t)
{
    size_t size = (t->mask + 1) * 2;
    Slot *slots = calloc(size, sizeof(Slot));
    if (slots == NULL) {
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].line != NULL) {
            size_t j = t->slots[i].hash & (size - 1);
            while (slots[j].line != NULL) {
                j = (j + 1) & (size - 1);
            }
            slots[j] = t->slots[i];
        }
    }
    free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* the id of line[start:start+len], a new one if the word is new; -1 without memory */
static i64
intern(Table *t, PyObject *line, Py_ssize_t start, Py_ssize_t len, uint64_t hash)
{
    size_t j = hash & t->mask;
    while (t->slots[j].line != NULL) {
        Slot *s = &t->slots[j];
        if (s->hash == hash && s->len == len && same_word(s->line, s->start, line, start, len)) {
            return s->id;
        }
        j = (j + 1) & t->mask;
    }
    Slot *s = &t->slots[j];
    s->hash = hash;
    s->id = (i64)t->used;
    s->line = line;
    s->start = start;
    s->len = len;
    t->used++;
    if (t->used * 2 > t->mask + 1 && grow(t) < 0) {
        return -1;
    }
    return (i64)(t->used - 1);
}

static PyObject *
word_ids(PyObject *self, PyObject *args)
{
    PyObject *lines;
    int mode;
    if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &lines, &mode)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(lines), total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *line = PyList_GET_ITEM(lines, k);
        if (!PyUnicode_Check(line)) {
            PyErr_Format(PyExc_TypeError, "word_ids: line %zd is %.100s, not str", k, Py_TYPE(line)->tp_name);
            return NULL;
        }
        total += PyUnicode_GET_LENGTH(line);
    }
    PyObject *ids = PyBytes_FromStringAndSize(NULL, (total + 1) * 8); /* at most one word per character */
    PyObject *counts = PyBytes_FromStringAndSize(NULL, n * 8);
    Table t = {calloc(1024, sizeof(Slot)), 1023, 0};
    if (ids == NULL || counts == NULL || t.slots == NULL) {
        goto nomem;
    }
    i64 *out = (i64 *)PyBytes_AS_STRING(ids), *cnt = (i64 *)PyBytes_AS_STRING(counts);
    Py_ssize_t w = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *line = PyList_GET_ITEM(lines, k);
        int kind = PyUnicode_KIND(line);
        const void *data = PyUnicode_DATA(line);
        Py_ssize_t len = PyUnicode_GET_LENGTH(line), i = 0, words = 0;
        while (i < len) {
            /* a run of whitespace: at either end, or of two or more, or one space (mode 1), or any (mode 0) separates */
            Py_ssize_t run = i;
            while (run < len && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, run))) {
                run++;
            }
            if (run == len) {
                break;
            }
            i = run;
            Py_ssize_t start = i;
            uint64_t hash = 1469598103934665603ULL;
            while (i < len) {
                Py_UCS4 c = PyUnicode_READ(kind, data, i);
                if (Py_UNICODE_ISSPACE(c)) {
                    if (mode == 0 || c == ' ' || i + 1 >= len || Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i + 1))) {
                        break; /* a separator (a lone whitespace character at the end is stripped) */
                    }
                }
                hash = (hash ^ (uint64_t)c) * 1099511628211ULL;
                i++;
            }
            i64 id = intern(&t, line, start, i - start, hash);
            if (id < 0) {
                goto nomem;
            }
            out[w++] = id;
            words++;
        }
        cnt[k] = words;
    }
    free(t.slots);
    if (_PyBytes_Resize(&ids, w * 8) < 0) {
        Py_DECREF(counts);
        return NULL;
    }
    return Py_BuildValue("NN", ids, counts);
nomem:
    free(t.slots);
    Py_XDECREF(ids);
    Py_XDECREF(counts);
    return PyErr_NoMemory();
}

static PyObject *
distances(PyObject *self, PyObject *args)
{
    PyObject *objs[4];
    if (!PyArg_ParseTuple(args, "OOOO", &objs[0], &objs[1], &objs[2], &objs[3])) {
        return NULL;
    }
    static const char *names[4] = {"hyp_ids", "hyp_offsets", "ref_ids", "ref_offsets"};
    Py_buffer v[4];
    for (int k = 0; k < 4; k++) {
        if (int64_buffer(objs[k], &v[k], 0, names[k]) < 0) {
            for (int q = 0; q < k; q++) {
                PyBuffer_Release(&v[q]);
            }
            return NULL;
        }
    }
    const i64 *h = v[0].buf, *ho = v[1].buf, *r = v[2].buf, *ro = v[3].buf;
    Py_ssize_t nh = v[0].len / 8, nho = v[1].len / 8, nr = v[2].len / 8, nro = v[3].len / 8;
    PyObject *out = NULL;
    i64 *row = NULL;
    if (nho < 1 || nho != nro) {
        PyErr_SetString(PyExc_ValueError, "distances: expected two offset arrays of the same length n + 1 >= 1");
        goto done;
    }
    Py_ssize_t n = nho - 1, longest = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (ho[k] < 0 || ho[k] > ho[k + 1] || ho[k + 1] > nh || ro[k] < 0 || ro[k] > ro[k + 1] || ro[k + 1] > nr) {
            PyErr_Format(PyExc_ValueError, "distances: offsets of pair %zd are out of order or out of range", k);
            goto done;
        }
        Py_ssize_t lh = (Py_ssize_t)(ho[k + 1] - ho[k]), lr = (Py_ssize_t)(ro[k + 1] - ro[k]);
        Py_ssize_t shorter = lh < lr ? lh : lr;
        if (shorter > longest) {
            longest = shorter;
        }
    }
    out = PyBytes_FromStringAndSize(NULL, n * 8);
    row = malloc((size_t)(longest + 1) * sizeof(i64));
    if (out == NULL || row == NULL) {
        Py_CLEAR(out);
        PyErr_NoMemory();
        goto done;
    }
    i64 *res = (i64 *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) {
        res[k] = distance(h + ho[k], (Py_ssize_t)(ho[k + 1] - ho[k]), r + ro[k], (Py_ssize_t)(ro[k + 1] - ro[k]), row);
    }
    Py_END_ALLOW_THREADS
done:
    free(row);
    for (int k = 0; k < 4; k++) {
        PyBuffer_Release(&v[k]);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"word_ids", word_ids, METH_VARARGS,
     "Every line's word ids end to end and each line's word count (mode 0: str.split; 1: jiwer's default)."},
    {"distances", distances, METH_VARARGS,
     "Levenshtein distances of n word-id sequence pairs (int64 ids and n + 1 offsets each side), as int64 bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_edit_distance",
    "Levenshtein distances of word-id sequences in C; see evalpipe.evaluators.kernels.edit_distance.", -1, methods,
};

PyMODINIT_FUNC
PyInit__edit_distance(void)
{
    return PyModule_Create(&module);
}
