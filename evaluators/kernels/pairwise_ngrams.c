/* pairwise_ngrams: clipped n-gram matches of every candidate against every pseudo-reference of its segment
 * (minimum Bayes risk decoding), or against the average of the pseudo-references' n-gram counts (reference
 * aggregation).  The Python facade and reference implementation are pairwise_ngrams.py.
 *
 * Input: the units of S sentences end to end (int64 ids: characters for chrF, word ids for chrF++'s words
 * and BLEU), their starts (S + 1), and per segment g the candidates [hyps[2 * g], hyps[g+1]) and the
 * pseudo-references [refs[2 * g], refs[g+1]) as ranges of sentence numbers (the same range for self-MBR).
 *
 * Per segment, every n-gram of orders 1..order gets an exact integer id by interning (prefix id, last unit)
 * pairs, packed into one 64-bit key, in a hash table (units are ids below 2^32; no limit on order); every
 * sentence becomes, per order, its distinct ids with their counts.  A pseudo-reference's counts are spread into a dense array once and every
 * candidate is matched against it: sum over the candidate's ids of min(count, reference count).  Memory
 * holds one segment's n-grams, never a table per pair.
 *
 * pairwise(units, starts, hyps, refs, order) -> bytes of int64 matches [pairs x order], pairs candidate-major
 * selected(units, starts, hyps, refs, order, pairs, at) -> bytes of int64 matches [P x order] of P pairs of
 *     (candidate, pseudo-reference) sentence numbers, pairs[2p], pairs[2p + 1], segment g's being pairs
 *     at[g] .. at[g+1] - 1: each segment's n-grams counted once, then only the pairs asked matched
 *     (probabilistic MBR's scattered cells)
 * profiles(units, starts, refs, refs, order) -> (bytes of int64 counts, bytes of int64 widths): each segment's
 *     pseudo-references as rows of n-gram counts over its distinct n-grams in the order first met (R x V, V the
 *     segment's width), for centroid MBR's k-means
 * aggregate(units, starts, hyps, refs, order) -> bytes of float64 matches [candidates x order] against the
 *     mean of the pseudo-references' counts, sum over ids of min(count, mean count)
 * bleu(rows, order, smooth, smooth_value, effective_order) -> bytes of float64 sentence BLEU of int64 stats rows
 *     [hyp_len, ref_len, correct_1..N, total_1..N]: sacrebleu's compute_bleu (2.x) step for step in doubles
 *     with the C library's exp and log, which CPython's math module calls -- so the same bits.  smooth: 0 none,
 *     1 floor, 2 add-k, 3 exp.
 */
#include <math.h>
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "int64_buffer.h"

/* An n-gram is (id of its (n-1)-gram prefix, or -1 for a unigram; its last unit), packed into one key:
 * (prefix + 2) << 32 | unit, never 0 (0 marks an empty slot).  Units are checked to lie in 0 .. 2^32 - 1 and a
 * segment holds fewer than 2^32 - 2 n-grams, so the packing is exact. */
typedef struct {
    uint64_t key;
    int64_t id;
} Slot;

typedef struct {
    Slot *table;
    size_t mask;
    int shift;
    int64_t next;
} Interner;

/* the id of (prefix, unit), a new one if it is new (the table has room: sized by the n-grams) */
static inline int64_t
intern(Interner *t, int64_t prefix, int64_t unit)
{
    uint64_t key = ((uint64_t)(prefix + 2) << 32) | (uint64_t)unit;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> t->shift); /* Fibonacci hashing: the high bits */
    while (t->table[i].key) {
        if (t->table[i].key == key) {
            return t->table[i].id;
        }
        i = (i + 1) & t->mask;
    }
    t->table[i].key = key;
    t->table[i].id = t->next;
    return t->next++;
}

/* One segment's sentences as sparse count vectors: for sentence k (0-based within the segment's span) and
 * order n, ids[vec[k * order + n] .. vec[k * order + n + 1]) with counts alongside. */
typedef struct {
    int64_t *ids, *counts, *vec, *dense;
    int64_t n_ids, vocabulary;
} Segment;

static void
segment_free(Segment *s)
{
    free(s->ids);
    free(s->counts);
    free(s->vec);
    free(s->dense);
    memset(s, 0, sizeof(*s));
}

/* sentences [first, last) of the units; 0, or -1 when memory ran out or the segment holds 2^32 - 2 n-grams or more
 * (no exception set: the GIL is released) */
static int
segment_build(Segment *s, const int64_t *units, const int64_t *starts, int64_t first, int64_t last, int order)
{
    int64_t total = 0;
    for (int64_t k = first; k < last; k++) {
        int64_t len = starts[k + 1] - starts[k];
        for (int n = 1; n <= order; n++) {
            total += len >= n ? len - n + 1 : 0;
        }
    }
    if (total >= (int64_t)UINT32_MAX - 2) {
        return -1;
    }
    size_t capacity = 16; /* at least 1.5 x the n-grams: a load factor below 2/3 however many are distinct */
    int bits = 4;
    while (capacity < (size_t)(total + total / 2 + 2)) {
        capacity <<= 1;
        bits++;
    }
    Interner t = {calloc(capacity, sizeof(Slot)), capacity - 1, 64 - bits, 0};
    int64_t *gram = malloc((size_t)(total + 1) * sizeof(int64_t)); /* each n-gram's id, sentence by sentence */
    int64_t *prev = NULL;
    int64_t longest = 1;
    for (int64_t k = first; k < last; k++) {
        int64_t len = starts[k + 1] - starts[k];
        longest = len > longest ? len : longest;
    }
    prev = malloc((size_t)longest * sizeof(int64_t));
    s->ids = malloc((size_t)(total + 1) * sizeof(int64_t));
    s->counts = malloc((size_t)(total + 1) * sizeof(int64_t));
    s->vec = malloc((size_t)((last - first) * order + 1) * sizeof(int64_t));
    if (!t.table || !gram || !prev || !s->ids || !s->counts || !s->vec) {
        free(t.table);
        free(gram);
        free(prev);
        segment_free(s);
        return -1;
    }
    int64_t g = 0;
    for (int64_t k = first; k < last; k++) {
        const int64_t *u = units + starts[k];
        int64_t len = starts[k + 1] - starts[k];
        for (int n = 1; n <= order; n++) {
            for (int64_t p = 0; p + n <= len; p++) { /* prev[p]: id of the (n-1)-gram at p */
                prev[p] = intern(&t, n == 1 ? -1 : prev[p], u[p + n - 1]);
                gram[g++] = prev[p];
            }
        }
    }
    free(prev);
    free(t.table);
    s->vocabulary = t.next;
    s->dense = calloc((size_t)t.next + 1, sizeof(int64_t));
    if (!s->dense) {
        free(gram);
        segment_free(s);
        return -1;
    }
    /* distinct ids and counts per sentence and order (dense counter, then cleared) */
    int64_t out = 0;
    g = 0;
    for (int64_t k = first; k < last; k++) {
        int64_t len = starts[k + 1] - starts[k];
        for (int n = 1; n <= order; n++) {
            int64_t m = len >= n ? len - n + 1 : 0;
            s->vec[(k - first) * order + (n - 1)] = out;
            for (int64_t i = 0; i < m; i++) {
                int64_t id = gram[g + i];
                if (s->dense[id]++ == 0) {
                    s->ids[out++] = id;
                }
            }
            for (int64_t i = s->vec[(k - first) * order + (n - 1)]; i < out; i++) {
                s->counts[i] = s->dense[s->ids[i]];
                s->dense[s->ids[i]] = 0;
            }
            g += m;
        }
    }
    s->vec[(last - first) * order] = out;
    s->n_ids = out;
    free(gram);
    return 0;
}

/* parse (units, starts, hyps, refs, order); 0 or -1 with an exception set */
typedef struct {
    Py_buffer views[4];
    int held;
    int order;
    int64_t n_units, n_sentences, n_segments;
} Args;

static void
args_release(Args *a)
{
    for (int i = 0; i < a->held; i++) {
        PyBuffer_Release(&a->views[i]);
    }
    a->held = 0;
}

static int
args_parse(PyObject *args, Args *a)
{
    PyObject *objs[4];
    a->held = 0;
    if (!PyArg_ParseTuple(args, "OOOOi", &objs[0], &objs[1], &objs[2], &objs[3], &a->order)) {
        return -1;
    }
    static const char *names[4] = {"units", "starts", "hyps", "refs"};
    for (int i = 0; i < 4; i++) {
        if (int64_buffer(objs[i], &a->views[i], 0, names[i]) < 0) {
            args_release(a);
            return -1;
        }
        a->held++;
    }
    a->n_units = a->views[0].len / 8;
    a->n_sentences = a->views[1].len / 8 - 1;
    a->n_segments = a->views[2].len / 16;
    const int64_t *starts = a->views[1].buf, *hyps = a->views[2].buf, *refs = a->views[3].buf;
    if (a->order < 1 || a->n_sentences < 0 || a->views[2].len % 16 || a->views[3].len != a->views[2].len) {
        PyErr_SetString(PyExc_ValueError, "pairwise_ngrams: expected order >= 1, starts of S + 1 values and hyps, "
                                          "refs of 2 G values (each segment's first and end sentence)");
        args_release(a);
        return -1;
    }
    if (a->n_sentences >= 0 && (starts[0] != 0 || starts[a->n_sentences] != a->n_units)) {
        PyErr_SetString(PyExc_ValueError, "pairwise_ngrams: starts must begin at 0 and end at the number of units");
        args_release(a);
        return -1;
    }
    const int64_t *units = a->views[0].buf;
    for (int64_t i = 0; i < a->n_units; i++) {
        if (units[i] < 0 || units[i] > (int64_t)UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "pairwise_ngrams: units must be ids in 0 .. 2^32 - 1");
            args_release(a);
            return -1;
        }
    }
    for (int64_t k = 0; k < a->n_sentences; k++) {
        if (starts[k + 1] < starts[k]) {
            PyErr_SetString(PyExc_ValueError, "pairwise_ngrams: starts must not decrease");
            args_release(a);
            return -1;
        }
    }
    for (int64_t g = 0; g < a->n_segments; g++) {
        if (hyps[2 * g] < 0 || hyps[2 * g] > hyps[2 * g + 1] || hyps[2 * g + 1] > a->n_sentences || refs[2 * g] < 0 ||
            refs[2 * g] > refs[2 * g + 1] || refs[2 * g + 1] > a->n_sentences) {
            PyErr_SetString(PyExc_ValueError, "pairwise_ngrams: each segment's hyps and refs must be ranges of "
                                              "sentence numbers");
            args_release(a);
            return -1;
        }
    }
    return 0;
}

/* the span of sentences a segment touches: both ranges */
static void
span(const int64_t *hyps, const int64_t *refs, int64_t g, int64_t *first, int64_t *last)
{
    *first = hyps[2 * g] < refs[2 * g] ? hyps[2 * g] : refs[2 * g];
    *last = hyps[2 * g + 1] > refs[2 * g + 1] ? hyps[2 * g + 1] : refs[2 * g + 1];
}

static PyObject *
pairwise(PyObject *self, PyObject *args)
{
    Args a;
    if (args_parse(args, &a) < 0) {
        return NULL;
    }
    const int64_t *units = a.views[0].buf, *starts = a.views[1].buf, *hyps = a.views[2].buf, *refs = a.views[3].buf;
    int order = a.order;
    int64_t pairs = 0;
    for (int64_t g = 0; g < a.n_segments; g++) {
        pairs += (hyps[2 * g + 1] - hyps[2 * g]) * (refs[2 * g + 1] - refs[2 * g]);
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(pairs * order * 8));
    if (!result) {
        args_release(&a);
        return NULL;
    }
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t g = 0; g < a.n_segments && !failed; g++) {
        int64_t first, last, n_h = hyps[2 * g + 1] - hyps[2 * g], n_r = refs[2 * g + 1] - refs[2 * g];
        if (n_h == 0 || n_r == 0) {
            continue;
        }
        span(hyps, refs, g, &first, &last);
        Segment s = {0};
        if (segment_build(&s, units, starts, first, last, order) < 0) {
            failed = 1; /* MemoryError raised below, with the GIL held */
            break;
        }
        for (int64_t r = refs[2 * g]; r < refs[2 * g + 1]; r++) {
            int64_t rk = r - first;
            for (int n = 0; n < order; n++) { /* the pseudo-reference's counts, dense */
                for (int64_t i = s.vec[rk * order + n]; i < s.vec[rk * order + n + 1]; i++) {
                    s.dense[s.ids[i]] = s.counts[i];
                }
            }
            for (int64_t h = hyps[2 * g]; h < hyps[2 * g + 1]; h++) {
                int64_t hk = h - first;
                int64_t *row = out + (((h - hyps[2 * g]) * n_r + (r - refs[2 * g])) * order);
                for (int n = 0; n < order; n++) {
                    int64_t m = 0;
                    for (int64_t i = s.vec[hk * order + n]; i < s.vec[hk * order + n + 1]; i++) {
                        int64_t c = s.counts[i], d = s.dense[s.ids[i]];
                        m += c < d ? c : d;
                    }
                    row[n] = m;
                }
            }
            for (int n = 0; n < order; n++) {
                for (int64_t i = s.vec[rk * order + n]; i < s.vec[rk * order + n + 1]; i++) {
                    s.dense[s.ids[i]] = 0;
                }
            }
        }
        out += n_h * n_r * order;
        segment_free(&s);
    }
    Py_END_ALLOW_THREADS
    args_release(&a);
    if (failed) {
        Py_DECREF(result);
        return PyErr_NoMemory();
    }
    return result;
}

static PyObject *
aggregate(PyObject *self, PyObject *args)
{
    Args a;
    if (args_parse(args, &a) < 0) {
        return NULL;
    }
    const int64_t *units = a.views[0].buf, *starts = a.views[1].buf, *hyps = a.views[2].buf, *refs = a.views[3].buf;
    int order = a.order;
    int64_t rows = 0;
    for (int64_t g = 0; g < a.n_segments; g++) {
        rows += hyps[2 * g + 1] - hyps[2 * g];
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(rows * order * 8));
    if (!result) {
        args_release(&a);
        return NULL;
    }
    double *out = (double *)PyBytes_AS_STRING(result);
    memset(out, 0, (size_t)(rows * order * 8));
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t g = 0; g < a.n_segments && !failed; g++) {
        int64_t first, last, n_h = hyps[2 * g + 1] - hyps[2 * g], n_r = refs[2 * g + 1] - refs[2 * g];
        if (n_h == 0) {
            continue;
        }
        if (n_r == 0) {
            out += n_h * order;
            continue;
        }
        span(hyps, refs, g, &first, &last);
        Segment s = {0};
        if (segment_build(&s, units, starts, first, last, order) < 0) {
            failed = 1;
            break;
        }
        double *mean = calloc((size_t)s.vocabulary + 1, sizeof(double));
        if (!mean) {
            segment_free(&s);
            failed = 1;
            break;
        }
        for (int64_t r = refs[2 * g]; r < refs[2 * g + 1]; r++) { /* summed in reference order, then divided */
            int64_t rk = r - first;
            for (int64_t i = s.vec[rk * order]; i < s.vec[rk * order + order]; i++) {
                mean[s.ids[i]] += (double)s.counts[i];
            }
        }
        for (int64_t v = 0; v < s.vocabulary; v++) {
            mean[v] /= (double)n_r;
        }
        for (int64_t h = hyps[2 * g]; h < hyps[2 * g + 1]; h++) {
            int64_t hk = h - first;
            double *row = out + (h - hyps[2 * g]) * order;
            for (int n = 0; n < order; n++) {
                double m = 0.0;
                for (int64_t i = s.vec[hk * order + n]; i < s.vec[hk * order + n + 1]; i++) {
                    double c = (double)s.counts[i], d = mean[s.ids[i]];
                    m += c < d ? c : d;
                }
                row[n] = m;
            }
        }
        out += n_h * order;
        free(mean);
        segment_free(&s);
    }
    Py_END_ALLOW_THREADS
    args_release(&a);
    if (failed) {
        Py_DECREF(result);
        return PyErr_NoMemory();
    }
    return result;
}

/* whether pairs (2 P values) and at (G + 1 offsets) are what selected() expects of these segments */
static int
pairs_fit(const int64_t *pairs, Py_ssize_t pairs_len, const int64_t *at, Py_ssize_t at_len, const Args *a)
{
    const int64_t *hyps = a->views[2].buf, *refs = a->views[3].buf;
    int64_t n_pairs = pairs_len / 16;
    if (pairs_len % 16 || at_len / 8 != a->n_segments + 1 || at[0] != 0 || at[a->n_segments] != n_pairs) {
        return 0;
    }
    for (int64_t g = 0; g < a->n_segments; g++) {
        if (at[g + 1] < at[g]) {
            return 0;
        }
        for (int64_t p = at[g]; p < at[g + 1]; p++) {
            int64_t h = pairs[2 * p], r = pairs[2 * p + 1];
            if (h < hyps[2 * g] || h >= hyps[2 * g + 1] || r < refs[2 * g] || r >= refs[2 * g + 1]) {
                return 0;
            }
        }
    }
    return 1;
}

static PyObject *
selected(PyObject *self, PyObject *args)
{
    if (PyTuple_GET_SIZE(args) != 7) {
        PyErr_SetString(PyExc_TypeError, "selected(units, starts, hyps, refs, order, pairs, at)");
        return NULL;
    }
    PyObject *head = PyTuple_GetSlice(args, 0, 5), *result = NULL;
    if (!head) {
        return NULL;
    }
    Args a;
    int parsed = args_parse(head, &a);
    Py_DECREF(head);
    if (parsed < 0) {
        return NULL;
    }
    Py_buffer pv, av;
    int held = 0; /* buffers of pairs and at held */
    if (int64_buffer(PyTuple_GET_ITEM(args, 5), &pv, 0, "pairs") < 0) {
        goto done;
    }
    held = 1;
    if (int64_buffer(PyTuple_GET_ITEM(args, 6), &av, 0, "at") < 0) {
        goto done;
    }
    held = 2;
    const int64_t *units = a.views[0].buf, *starts = a.views[1].buf, *hyps = a.views[2].buf, *refs = a.views[3].buf;
    const int64_t *pairs = pv.buf, *at = av.buf;
    int order = a.order;
    if (!pairs_fit(pairs, pv.len, at, av.len, &a)) {
        PyErr_SetString(PyExc_ValueError, "pairwise_ngrams: expected pairs of (candidate, pseudo-reference) sentence "
                                          "numbers within their segment's ranges, and at of G + 1 rising offsets "
                                          "from 0 to the number of pairs");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(pv.len / 16 * order * 8));
    if (!result) {
        goto done;
    }
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t g = 0; g < a.n_segments && !failed; g++) {
        if (at[g] == at[g + 1]) {
            continue;
        }
        int64_t first, last;
        span(hyps, refs, g, &first, &last);
        Segment s = {0};
        if (segment_build(&s, units, starts, first, last, order) < 0) {
            failed = 1;
            break;
        }
        for (int64_t p = at[g]; p < at[g + 1]; p++) {
            int64_t hk = pairs[2 * p] - first, rk = pairs[2 * p + 1] - first;
            for (int64_t i = s.vec[rk * order]; i < s.vec[rk * order + order]; i++) { /* the reference, dense */
                s.dense[s.ids[i]] = s.counts[i];
            }
            int64_t *row = out + p * order;
            for (int n = 0; n < order; n++) {
                int64_t m = 0;
                for (int64_t i = s.vec[hk * order + n]; i < s.vec[hk * order + n + 1]; i++) {
                    int64_t c = s.counts[i], d = s.dense[s.ids[i]];
                    m += c < d ? c : d;
                }
                row[n] = m;
            }
            for (int64_t i = s.vec[rk * order]; i < s.vec[rk * order + order]; i++) {
                s.dense[s.ids[i]] = 0;
            }
        }
        segment_free(&s);
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        Py_CLEAR(result);
        PyErr_NoMemory();
    }
done:
    if (held > 1) {
        PyBuffer_Release(&av);
    }
    if (held > 0) {
        PyBuffer_Release(&pv);
    }
    args_release(&a);
    return result;
}

/* profiles(units, starts, refs, refs, order): each segment's pseudo-references as dense n-gram count rows (the
 * statistic vectors centroid MBR clusters) -- (bytes of int64 counts, each segment's R x V row-major, segments in
 * order; bytes of int64 V per segment).  Columns are the segment's distinct n-grams in the order first met:
 * pseudo-reference by pseudo-reference, order by order, left to right (the interning order). */
static PyObject *
profiles(PyObject *self, PyObject *args)
{
    Args a;
    if (args_parse(args, &a) < 0) {
        return NULL;
    }
    const int64_t *units = a.views[0].buf, *starts = a.views[1].buf, *refs = a.views[3].buf;
    int order = a.order;
    PyObject *widths = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(a.n_segments * 8));
    if (!widths) {
        args_release(&a);
        return NULL;
    }
    int64_t *width = (int64_t *)PyBytes_AS_STRING(widths);
    int64_t *buf = NULL;
    size_t used = 0, room = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t g = 0; g < a.n_segments && !failed; g++) {
        int64_t first = refs[2 * g], last = refs[2 * g + 1];
        width[g] = 0;
        if (first == last) {
            continue;
        }
        Segment s = {0};
        if (segment_build(&s, units, starts, first, last, order) < 0) {
            failed = 1;
            break;
        }
        size_t need = (size_t)(last - first) * (size_t)s.vocabulary;
        if (used + need > room) {
            size_t grown = room ? room : 1 << 16;
            while (grown < used + need) {
                grown *= 2;
            }
            int64_t *more = realloc(buf, grown * sizeof(int64_t));
            if (!more) {
                segment_free(&s);
                failed = 1;
                break;
            }
            buf = more;
            room = grown;
        }
        int64_t *rows = buf + used;
        memset(rows, 0, need * sizeof(int64_t));
        for (int64_t k = 0; k < last - first; k++) {
            for (int64_t i = s.vec[k * order]; i < s.vec[k * order + order]; i++) {
                rows[k * s.vocabulary + s.ids[i]] = s.counts[i];
            }
        }
        used += need;
        width[g] = s.vocabulary;
        segment_free(&s);
    }
    Py_END_ALLOW_THREADS
    args_release(&a);
    if (failed) {
        free(buf);
        Py_DECREF(widths);
        return PyErr_NoMemory();
    }
    PyObject *counts = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)(used * sizeof(int64_t)));
    free(buf);
    if (!counts) {
        Py_DECREF(widths);
        return NULL;
    }
    return Py_BuildValue("(NN)", counts, widths);
}

static PyObject *
bleu(PyObject *self, PyObject *args)
{
    PyObject *obj;
    int order, smooth, effective;
    double value;
    if (!PyArg_ParseTuple(args, "Oiidp", &obj, &order, &smooth, &value, &effective)) {
        return NULL;
    }
    Py_buffer view;
    if (int64_buffer(obj, &view, 0, "rows") < 0) {
        return NULL;
    }
    int64_t width = 2 + 2 * (int64_t)order, n_rows = order > 0 ? view.len / 8 / width : 0;
    if (order < 1 || order > 64 || smooth < 0 || smooth > 3 || (view.len / 8) % width) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "bleu: expected rows of 2 + 2 * order int64 stats, order 1..64, smooth 0..3");
        return NULL;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_rows * 8));
    if (!result) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const int64_t *rows = view.buf;
    double *out = (double *)PyBytes_AS_STRING(result);
    for (int64_t i = 0; i < n_rows; i++) {
        const int64_t *r = rows + i * width;
        double sys_len = (double)r[0], ref_len = (double)r[1], bp = 1.0, precisions[64], log_sum = 0.0;
        int any = 0, eff = order;
        for (int n = 0; n < order; n++) {
            any |= r[2 + n] != 0;
            precisions[n] = 0.0;
        }
        if (sys_len < ref_len) {
            bp = sys_len > 0 ? exp(1.0 - ref_len / sys_len) : 0.0;
        }
        if (!any) {
            out[i] = 0.0;
            continue;
        }
        double mteval = 1.0;
        for (int n = 1; n <= order; n++) {
            double correct = (double)r[1 + n], total = (double)r[1 + order + n];
            if (smooth == 2 && n > 1) {
                correct += value;
                total += value;
            }
            if (total == 0) {
                break;
            }
            if (effective) {
                eff = n;
            }
            if (correct == 0) {
                if (smooth == 3) {
                    mteval *= 2;
                    precisions[n - 1] = 100. / (mteval * total);
                } else if (smooth == 1) {
                    precisions[n - 1] = 100. * value / total;
                }
            } else {
                precisions[n - 1] = 100. * correct / total;
            }
        }
        for (int n = 0; n < eff; n++) { /* sacrebleu's my_log: log, or -9999999999 for 0 */
            log_sum += precisions[n] == 0.0 ? -9999999999.0 : log(precisions[n]);
        }
        out[i] = bp * exp(log_sum / eff);
    }
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"pairwise", pairwise, METH_VARARGS,
     "pairwise(units, starts, hyps, refs, order) -> int64 matches [pairs x order], candidate-major"},
    {"selected", selected, METH_VARARGS,
     "selected(units, starts, hyps, refs, order, pairs, at) -> int64 matches [pairs x order] of the (candidate, "
     "pseudo-reference) sentence pairs asked, segment g's pairs[2 * at[g] .. 2 * at[g+1])"},
    {"profiles", profiles, METH_VARARGS,
     "profiles(units, starts, refs, refs, order) -> (int64 counts of each segment's pseudo-references, R x V "
     "row-major; int64 V per segment)"},
    {"aggregate", aggregate, METH_VARARGS,
     "aggregate(units, starts, hyps, refs, order) -> float64 matches [candidates x order] against the mean "
     "pseudo-reference counts"},
    {"bleu", bleu, METH_VARARGS,
     "bleu(rows, order, smooth, smooth_value, effective_order) -> float64 sentence BLEU of int64 stats rows"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pairwise_ngrams", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__pairwise_ngrams(void)
{
    return PyModule_Create(&module);
}
