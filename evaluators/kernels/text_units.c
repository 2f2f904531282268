/* evalpipe.evaluators.kernels._text_units: the units the n-gram kernels count, cut from text in C; built at
 * install when a C compiler is there (setup.py, optional=True).  Each function equals a Python
 * expression, which stays the reference path (evaluators/kernels/ngram_matches.py, chrf.py, chrf_words.py) and is
 * what tests/test_text_units.py checks it against.
 *
 *   chars(lines) -> (units, lengths)                 int64 bytes; chrF without whitespace:
 *       units: the code points of "".join(line.split()) of every line end to end, lengths: per line
 *   words(lines, marks) -> (words, counts)           chrF++'s word split (sacrebleu's
 *       CHRF._remove_punctuation) of every line end to end, and each line's count:
 *       for w in line.split(): a word of 2+ characters whose last character is in marks becomes
 *       [w[:-1], w[-1]], else one whose first is becomes [w[0], w[1:]], else it stays whole
 *
 * Whitespace is str.split()'s (Py_UNICODE_ISSPACE).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *
fast_lines(PyObject *lines)
{
    PyObject *sequence = PySequence_Fast(lines, "expected a sequence of str");
    if (!sequence) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PySequence_Fast_GET_ITEM(sequence, i);
        if (!PyUnicode_Check(line)) {
            PyErr_Format(PyExc_TypeError, "line %zd: expected str, got %.100s", i + 1, Py_TYPE(line)->tp_name);
            Py_DECREF(sequence);
            return NULL;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(line) < 0) {
            Py_DECREF(sequence);
            return NULL;
        }
#endif
    }
    return sequence;
}

static PyObject *
chars(PyObject *self, PyObject *lines)
{
    PyObject *sequence = fast_lines(lines);
    if (!sequence) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        total += PyUnicode_GET_LENGTH(PySequence_Fast_GET_ITEM(sequence, i));
    }
    PyObject *units = PyBytes_FromStringAndSize(NULL, total * 8);
    PyObject *lengths = PyBytes_FromStringAndSize(NULL, n * 8);
    if (!units || !lengths) {
        Py_XDECREF(units);
        Py_XDECREF(lengths);
        Py_DECREF(sequence);
        return NULL;
    }
    int64_t *u = (int64_t *)PyBytes_AS_STRING(units), *l = (int64_t *)PyBytes_AS_STRING(lengths);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PySequence_Fast_GET_ITEM(sequence, i);
        int kind = PyUnicode_KIND(line);
        const void *data = PyUnicode_DATA(line);
        Py_ssize_t size = PyUnicode_GET_LENGTH(line), start = at;
        for (Py_ssize_t p = 0; p < size; p++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, p);
            if (!Py_UNICODE_ISSPACE(c)) {
                u[at++] = c;
            }
        }
        l[i] = at - start;
    }
    Py_DECREF(sequence);
    if (at != total && _PyBytes_Resize(&units, at * 8) < 0) {
        Py_DECREF(lengths);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, units, lengths);
    Py_DECREF(units);
    Py_DECREF(lengths);
    return result;
}

static int
append(PyObject *list, PyObject *line, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *word = PyUnicode_Substring(line, start, end);
    if (!word) {
        return -1;
    }
    int failed = PyList_Append(list, word);
    Py_DECREF(word);
    return failed;
}

static PyObject *
words(PyObject *self, PyObject *args)
{
    PyObject *lines, *marks;
    if (!PyArg_ParseTuple(args, "OU", &lines, &marks)) {
        return NULL;
    }
    PyObject *sequence = fast_lines(lines);
    if (!sequence) {
        return NULL;
    }
    int m_kind = PyUnicode_KIND(marks);
    const void *m_data = PyUnicode_DATA(marks);
    Py_ssize_t m_size = PyUnicode_GET_LENGTH(marks);
#define IS_MARK(c, result)                                                                                     \
    do {                                                                                                       \
        result = 0;                                                                                            \
        for (Py_ssize_t q = 0; q < m_size; q++) {                                                              \
            if (PyUnicode_READ(m_kind, m_data, q) == (c)) {                                                    \
                result = 1;                                                                                    \
                break;                                                                                         \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
    /* marks are few; an ASCII lookup table answers for the common case */
    char ascii[128] = {0};
    for (Py_ssize_t q = 0; q < m_size; q++) {
        Py_UCS4 c = PyUnicode_READ(m_kind, m_data, q);
        if (c < 128) {
            ascii[c] = 1;
        }
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    PyObject *all = PyList_New(0), *counts = PyList_New(n), *result = NULL;
    if (!all || !counts) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PySequence_Fast_GET_ITEM(sequence, i);
        int kind = PyUnicode_KIND(line);
        const void *data = PyUnicode_DATA(line);
        Py_ssize_t size = PyUnicode_GET_LENGTH(line), p = 0, before = PyList_GET_SIZE(all);
        while (p < size) {
            while (p < size && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, p))) {
                p++;
            }
            if (p == size) {
                break;
            }
            Py_ssize_t start = p;
            while (p < size && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, p))) {
                p++;
            }
            int last = 0, first = 0;
            if (p - start > 1) {
                Py_UCS4 c = PyUnicode_READ(kind, data, p - 1);
                if (c < 128) {
                    last = ascii[c];
                }
                else {
                    IS_MARK(c, last);
                }
                if (!last) {
                    c = PyUnicode_READ(kind, data, start);
                    if (c < 128) {
                        first = ascii[c];
                    }
                    else {
                        IS_MARK(c, first);
                    }
                }
            }
            int failed;
            if (last) {
                failed = append(all, line, start, p - 1) < 0 || append(all, line, p - 1, p) < 0;
            }
            else if (first) {
                failed = append(all, line, start, start + 1) < 0 || append(all, line, start + 1, p) < 0;
            }
            else {
                failed = append(all, line, start, p) < 0;
            }
            if (failed) {
                goto done;
            }
        }
        PyObject *count = PyLong_FromSsize_t(PyList_GET_SIZE(all) - before);
        if (!count) {
            goto done;
        }
        PyList_SET_ITEM(counts, i, count);
    }
#undef IS_MARK
    result = PyTuple_Pack(2, all, counts);
done:
    Py_XDECREF(all);
    Py_XDECREF(counts);
    Py_DECREF(sequence);
    return result;
}

static PyMethodDef methods[] = {
    {"chars", chars, METH_O, "(code points of every line without whitespace, end to end; per-line counts)."},
    {"words", words, METH_VARARGS, "(chrF++'s words of every line end to end, per-line counts)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_text_units", "Text cut into n-gram units in C (see evalpipe.evaluators.kernels.text_units).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__text_units(void)
{
    return PyModule_Create(&module);
}
