/* evalpipe.evaluators.kernels._tercom: Tercom's edit count in C, built at install when a C compiler is there
 * (setup.py, optional=True; without it evaluators/kernels/tercom.py, the Python reference, gives the same
 * integers).
 *
 * The algorithm is the one documented in evaluators/kernels/tercom.py, step for step (sacrebleu 2.6's
 * translation_edit_rate with its defaults): a banded edit distance (beam 25 around the length-ratio
 * diagonal, the first of match/substitution, deletion, insertion that is strictly cheaper wins), the
 * alignment walked back from (H, R), and a greedy loop over shift candidates (spans of 1..10 words, at
 * most 50 positions away, at most 1,000 candidates in all), best by (gain, length, earliest start,
 * earliest target).  A candidate shares its first rows with the current hypothesis, so only the rows
 * after the first moved word are recomputed.
 *
 *   edits(hyp, ref) -> int    hyp, ref: contiguous int64 buffers of word ids (numpy arrays or bytes)
 *
 * The GIL is released while counting.  tests/test_ter_kernel.py checks the count against the Python
 * reference and sacrebleu's own function on real and random data.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "int64_buffer.h"

typedef int64_t i64;

#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define BEAM 25
#define MAX_CANDIDATES 1000
#define INF ((i64)10000000000000000LL)
enum { MATCH = 0, SUB = 1, DEL = 2, INS = 3, UNDEF = 4 };

/* Row i of the banded matrix from row i - 1 (cost/op are reset here). */
static void
fill_row(Py_ssize_t i, const i64 *hyp, Py_ssize_t h, const i64 *ref, Py_ssize_t r, const i64 *prev, i64 *cost,
         signed char *op, double ratio, Py_ssize_t width)
{
    Py_ssize_t diag = (Py_ssize_t)floor((double)i * ratio);
    Py_ssize_t lo = diag - width > 0 ? diag - width : 0;
    Py_ssize_t hi = i == h ? r + 1 : (r + 1 < diag + width ? r + 1 : diag + width);
    for (Py_ssize_t j = 0; j <= r; j++) {
        cost[j] = INF;
        op[j] = UNDEF;
    }
    for (Py_ssize_t j = lo; j < hi; j++) {
        if (j == 0) {
            cost[0] = prev[0] + 1;
            op[0] = DEL;
            continue;
        }
        int same = hyp[i - 1] == ref[j - 1];
        i64 c = prev[j - 1] + (same ? 0 : 1);
        if (cost[j] > c) {
            cost[j] = c;
            op[j] = same ? MATCH : SUB;
        }
        c = prev[j] + 1;
        if (cost[j] > c) {
            cost[j] = c;
            op[j] = DEL;
        }
        c = cost[j - 1] + 1;
        if (cost[j] > c) {
            cost[j] = c;
            op[j] = INS;
        }
    }
}

static void
beam(Py_ssize_t h, Py_ssize_t r, double *ratio, Py_ssize_t *width)
{
    *ratio = h ? (double)r / (double)h : 1.0;
    *width = BEAM < *ratio / 2 ? (Py_ssize_t)ceil(*ratio / 2 + BEAM) : BEAM;
}

/* The whole banded matrix of hyp into costs/ops ((h + 1) x (r + 1)). */
static void
full_matrix(const i64 *hyp, Py_ssize_t h, const i64 *ref, Py_ssize_t r, i64 *costs, signed char *ops)
{
    double ratio;
    Py_ssize_t width;
    beam(h, r, &ratio, &width);
    for (Py_ssize_t j = 0; j <= r; j++) {
        costs[j] = j;
        ops[j] = INS;
    }
    for (Py_ssize_t i = 1; i <= h; i++) {
        fill_row(i, hyp, h, ref, r, costs + (i - 1) * (r + 1), costs + i * (r + 1), ops + i * (r + 1), ratio, width);
    }
}

/* d(hyp) given row `start` of its matrix (rows 0..start depend only on hyp[:start]). */
static i64
distance_from(const i64 *hyp, Py_ssize_t h, const i64 *ref, Py_ssize_t r, Py_ssize_t start, const i64 *row,
              i64 *a, i64 *b, signed char *sink)
{
    if (start == h) {
        return row[r];
    }
    double ratio;
    Py_ssize_t width;
    beam(h, r, &ratio, &width);
    const i64 *prev = row;
    for (Py_ssize_t i = start + 1; i <= h; i++) {
        i64 *cur = i % 2 ? a : b;
        fill_row(i, hyp, h, ref, r, prev, cur, sink, ratio, width);
        prev = cur;
    }
    return prev[r];
}

/* Walk back from (h, r): error flags of both sides, each reference word's hypothesis position.
 * 0, or -1 for a path through an unfilled cell (cannot happen: the last row is filled). */
static int
alignment(const signed char *ops, Py_ssize_t h, Py_ssize_t r, char *hyp_err, char *ref_err, Py_ssize_t *align)
{
    Py_ssize_t i = h, j = r;
    memset(hyp_err, 0, (size_t)h);
    memset(ref_err, 0, (size_t)r);
    while (i > 0 || j > 0) {
        signed char o = ops[i * (r + 1) + j];
        if (o == MATCH || o == SUB) {
            i--;
            j--;
            align[j] = i;
            if (o == SUB) {
                hyp_err[i] = 1;
                ref_err[j] = 1;
            }
        }
        else if (o == DEL) {
            i--;
            hyp_err[i] = 1;
        }
        else if (o == INS) {
            j--;
            align[j] = i - 1;
            ref_err[j] = 1;
        }
        else {
            return -1;
        }
    }
    return 0;
}

/* words with words[start:start+length] moved before `target` (Tercom's three cases) into out; returns the
 * first position where out differs from words (n if none). */
static Py_ssize_t
shifted(const i64 *words, Py_ssize_t n, Py_ssize_t start, Py_ssize_t length, Py_ssize_t target, i64 *out)
{
    Py_ssize_t pieces[4][2];
    if (target < start) {
        Py_ssize_t p[4][2] = {{0, target}, {start, start + length}, {target, start}, {start + length, n}};
        memcpy(pieces, p, sizeof(p));
    }
    else if (target > start + length) {
        Py_ssize_t p[4][2] = {{0, start}, {start + length, target}, {start, start + length}, {target, n}};
        memcpy(pieces, p, sizeof(p));
    }
    else {
        Py_ssize_t p[4][2] = {{0, start}, {start + length, length + target}, {start, start + length},
                              {length + target, n}};
        memcpy(pieces, p, sizeof(p));
    }
    Py_ssize_t k = 0;
    for (int q = 0; q < 4; q++) {
        Py_ssize_t stop = pieces[q][1] < n ? pieces[q][1] : n;
        for (Py_ssize_t x = pieces[q][0]; x < stop; x++) {
            out[k++] = words[x];
        }
    }
    Py_ssize_t first = 0;
    while (first < n && out[first] == words[first]) {
        first++;
    }
    return first;
}

static int
any_set(const char *flags, Py_ssize_t from, Py_ssize_t count)
{
    for (Py_ssize_t x = from; x < from + count; x++) {
        if (flags[x]) {
            return 1;
        }
    }
    return 0;
}

/* Tercom's edit count of hyp against ref; -1 when out of memory, -2 on an unfilled path. */
static i64
count_edits(const i64 *hyp, Py_ssize_t h, const i64 *ref, Py_ssize_t r)
{
    if (r == 0) {
        return h;
    }
    i64 result = -1;
    size_t cells = (size_t)(h + 1) * (size_t)(r + 1);
    i64 *words = malloc(sizeof(i64) * (size_t)(h + 1));
    i64 *candidate = malloc(sizeof(i64) * (size_t)(h + 1));
    i64 *best_words = malloc(sizeof(i64) * (size_t)(h + 1));
    i64 *costs = malloc(sizeof(i64) * cells);
    signed char *ops = malloc(cells);
    i64 *a = malloc(sizeof(i64) * (size_t)(r + 1));
    i64 *b = malloc(sizeof(i64) * (size_t)(r + 1));
    signed char *sink = malloc((size_t)(r + 1));
    char *hyp_err = malloc((size_t)(h + 1));
    char *ref_err = malloc((size_t)(r + 1));
    Py_ssize_t *align = malloc(sizeof(Py_ssize_t) * (size_t)(r + 1));
    if (!words || !candidate || !best_words || !costs || !ops || !a || !b || !sink || !hyp_err || !ref_err || !align) {
        goto done;
    }
    memcpy(words, hyp, sizeof(i64) * (size_t)h);
    i64 shifts = 0;
    long checked = 0;
    for (;;) {
        full_matrix(words, h, ref, r, costs, ops);
        i64 before = costs[h * (r + 1) + r];
        if (alignment(ops, h, r, hyp_err, ref_err, align) < 0) {
            result = -2;
            goto done;
        }
        int found = 0, capped = 0;
        i64 best_gain = 0;
        Py_ssize_t best_length = 0, best_sh = 0, best_target = 0;
        for (Py_ssize_t sh = 0; sh < h && !capped; sh++) {
            Py_ssize_t sr_lo = sh - MAX_SHIFT_DIST > 0 ? sh - MAX_SHIFT_DIST : 0;
            Py_ssize_t sr_hi = r < sh + MAX_SHIFT_DIST + 1 ? r : sh + MAX_SHIFT_DIST + 1;
            for (Py_ssize_t sr = sr_lo; sr < sr_hi && !capped; sr++) {
                Py_ssize_t length = 0;
                while (length < MAX_SHIFT_SIZE && words[sh + length] == ref[sr + length]) {
                    length++;
                    if (!any_set(hyp_err, sh, length) || !any_set(ref_err, sr, length)
                        || (sh <= align[sr] && align[sr] < sh + length)) {
                        if (sh + length == h || sr + length == r) {
                            break;
                        }
                        continue;
                    }
                    Py_ssize_t last = -1;
                    for (Py_ssize_t offset = -1; offset < length; offset++) {
                        Py_ssize_t target = sr + offset == -1 ? 0 : align[sr + offset] + 1;
                        if (target == last) {
                            continue;
                        }
                        last = target;
                        Py_ssize_t first = shifted(words, h, sh, length, target, candidate);
                        i64 gain = before - distance_from(candidate, h, ref, r, first, costs + first * (r + 1), a, b,
                                                          sink);
                        checked++;
                        /* key (gain, length, -sh, -target), the largest wins */
                        int better = !found || gain > best_gain
                            || (gain == best_gain && (length > best_length
                                || (length == best_length && (sh < best_sh
                                    || (sh == best_sh && target < best_target)))));
                        if (better) {
                            found = 1;
                            best_gain = gain;
                            best_length = length;
                            best_sh = sh;
                            best_target = target;
                            memcpy(best_words, candidate, sizeof(i64) * (size_t)h);
                        }
                    }
                    if (checked >= MAX_CANDIDATES) {
                        capped = 1;
                        break;
                    }
                    if (sh + length == h || sr + length == r) {
                        break;
                    }
                }
            }
        }
        if (capped || !found || best_gain <= 0) {
            break;
        }
        shifts++;
        memcpy(words, best_words, sizeof(i64) * (size_t)h);
    }
    full_matrix(words, h, ref, r, costs, ops);
    result = shifts + costs[h * (r + 1) + r];
done:
    free(words);
    free(candidate);
    free(best_words);
    free(costs);
    free(ops);
    free(a);
    free(b);
    free(sink);
    free(hyp_err);
    free(ref_err);
    free(align);
    return result;
}

static PyObject *
edits(PyObject *self, PyObject *args)
{
    PyObject *o_hyp, *o_ref;
    if (!PyArg_ParseTuple(args, "OO", &o_hyp, &o_ref)) {
        return NULL;
    }
    Py_buffer hyp, ref;
    if (int64_buffer(o_hyp, &hyp, 0, "hyp") < 0) {
        return NULL;
    }
    if (int64_buffer(o_ref, &ref, 0, "ref") < 0) {
        PyBuffer_Release(&hyp);
        return NULL;
    }
    i64 result;
    Py_BEGIN_ALLOW_THREADS
    result = count_edits((const i64 *)hyp.buf, hyp.len / 8, (const i64 *)ref.buf, ref.len / 8);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&hyp);
    PyBuffer_Release(&ref);
    if (result == -1) {
        return PyErr_NoMemory();
    }
    if (result == -2) {
        PyErr_SetString(PyExc_ValueError, "TER: a path through an unfilled cell");
        return NULL;
    }
    return PyLong_FromLongLong(result);
}

static PyMethodDef methods[] = {
    {"edits", edits, METH_VARARGS, "Tercom's edit count of hyp against ref (int64 buffers of word ids)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tercom",
    "Tercom's edit count (sacrebleu 2.6's translation_edit_rate) in C; see evalpipe.evaluators.kernels.tercom.", -1, methods,
};

PyMODINIT_FUNC
PyInit__tercom(void)
{
    return PyModule_Create(&module);
}
