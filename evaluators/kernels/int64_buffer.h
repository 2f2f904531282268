/* int64_buffer: the one check the C kernels (ngram_matches.c, tercom.c) make of the arrays they are given.
 * Included by each (one translation unit per extension, so a static function here is one copy per module). */
#ifndef EVALPIPE_INT64_BUFFER_H
#define EVALPIPE_INT64_BUFFER_H

#include <Python.h>
#include <string.h>

/* obj as a C-contiguous buffer of int64 values (numpy int64, array('q'), or bytes holding them), writable when
 * asked; else a TypeError naming the argument and what came, -1 */
static int
int64_buffer(PyObject *obj, Py_buffer *view, int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        return -1;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    int ok = view->itemsize == 8 && (strcmp(f, "l") == 0 || strcmp(f, "q") == 0);
    if (!ok && view->itemsize == 1 && (strcmp(f, "B") == 0 || strcmp(f, "b") == 0 || strcmp(f, "c") == 0)) {
        ok = view->len % 8 == 0; /* bytes holding int64 values */
    }
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous int64 buffer, got format '%s' itemsize %zd",
                     name, view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

#endif
