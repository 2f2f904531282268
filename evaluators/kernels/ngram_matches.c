/* evalpipe.evaluators.kernels._ngram_matches: clipped n-gram matches in C, built at install when a C compiler
 * is there (setup.py, optional=True; without it the numpy path, RefIndex, gives the same integers).
 *
 * The algorithm, also documented in evaluators/kernels/ngram_matches.py:
 *   - a segment's alphabet is the sorted distinct units of its references; a unit's rank in it is
 *     1..A, a hypothesis unit outside it gets `unknown` (all ones: it never matches);
 *   - every position becomes one key packing its next `order` ranks, `bits` bits each, 0 past the
 *     sentence end; sorting by the K-gram also sorts by every prefix, so one sorted run of keys
 *     serves every order n <= K (`key >> (K - n) * bits` is the n-gram);
 *   - clipped matches sum_g min(hyp count, ref count) per reference are one merge of the sorted
 *     hypothesis and reference keys (walk); BLEU's multi-reference clipping against the largest
 *     reference count advances one pointer per reference over the distinct hypothesis n-grams
 *     (walk_max), and an order without a match ends the segment.
 *
 * Block entry points (arrays from numpy, int64, C-contiguous; outputs are filled in place; the
 * GIL is released while they count):
 *   alphabets(ref_units, ref_offsets, refs, alphabet_out, a_offsets_out) -> (size, widest)
 *   reference_keys(ref_units, ref_offsets, refs, alphabet, a_offsets, order, bits, keys_out)
 *   matches(hyp_units, hyp_offsets, alphabet, a_offsets, ref_keys, ref_offsets, refs, order, bits,
 *           clip_to_max, out)            out: segments x order x (1 if clip_to_max else refs)
 *   ref_offsets is refs x (segments + 1) flattened: reference k of segment s is
 *   units[ref_offsets[k, s]:ref_offsets[k, s + 1]].
 *
 *   ids(tokens, vocab, missing) -> int64 bytes   [vocab.get(t, missing) for t in tokens] (a block's
 *       hypothesis word ids; every id found must lie in 0..missing - 1)
 *
 * One-line entry points (the line protocol; tokens are a list of str, vocab maps a token to its
 * rank 1..len(vocab)):
 *   line_keys(tokens, vocab, order, bits) -> bytes       the sorted keys of one sentence
 *   line_matches(tokens, vocab, ref_keys, ref_bounds, order, bits) -> list of `order` ints
 *       BLEU's clipped matches against the largest count of the references whose sorted keys are
 *       ref_keys[ref_bounds[k]:ref_bounds[k + 1]] (int64 bytes both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "int64_buffer.h"

typedef int64_t i64;
#define MAX_ORDER 63

/* the index of the highest set bit of x > 0 */
static inline int
highest_bit(unsigned long long x)
{
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(x);
#else
    int b = 0;
    while (x >>= 1) {
        b++;
    }
    return b;
#endif
}

/* ---- buffers ---------------------------------------------------------------------------- */

#define COUNT(view) ((view).len / 8)
#define DATA(view) ((i64 *)(view).buf)

/* ---- kernels ---------------------------------------------------------------------------- */

static int
compare_i64(const void *a, const void *b)
{
    i64 x = *(const i64 *)a, y = *(const i64 *)b;
    return (x > y) - (x < y);
}

/* Sorted packed keys of ranks[0:n] into out[0:n]: a counting sort on the first rank, then an
 * insertion sort inside each (small) bucket.  start: scratch of alpha + 3 entries. */
static void
sorted_keys(const i64 *ranks, Py_ssize_t n, int order, int bits, i64 alpha, i64 *out, i64 *start)
{
    i64 buckets = alpha + 2; /* ranks 1..alpha, unknown in the last bucket */
    memset(start, 0, (size_t)(buckets + 1) * sizeof(i64));
    for (Py_ssize_t p = 0; p < n; p++) {
        i64 b = ranks[p] < buckets - 1 ? ranks[p] : buckets - 1;
        start[b + 1]++;
    }
    for (i64 b = 0; b < buckets; b++) {
        start[b + 1] += start[b];
    }
    for (Py_ssize_t p = 0; p < n; p++) { /* start[b]: where bucket b's next key goes */
        i64 key = 0;
        for (int j = 0; j < order; j++) {
            key = (key << bits) | (p + j < n ? ranks[p + j] : 0);
        }
        out[start[ranks[p] < buckets - 1 ? ranks[p] : buckets - 1]++] = key;
    }
    /* every bucket holds keys with the same first rank: an insertion sort of the whole run only
     * moves keys inside their bucket, so it costs the sum of the buckets' squared sizes */
    for (Py_ssize_t p = 1; p < n; p++) {
        i64 key = out[p];
        Py_ssize_t at = p;
        while (at > 0 && out[at - 1] > key) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = key;
    }
}

/* row[n - 1] += sum over n-grams of min(hyp count, ref count), every order at once, by one merge of
 * the sorted runs h[0:hn] and r[0:rn] (ngram_kernel._walk). */
static void
walk(const i64 *h, Py_ssize_t hn, const i64 *r, Py_ssize_t rn, int order, int bits, i64 *row)
{
    i64 mask = ((i64)1 << bits) - 1;
    i64 start_h[MAX_ORDER + 1] = {0}, start_r[MAX_ORDER + 1] = {0};
    i64 seen_h = 0, seen_r = 0, previous = -1;
    int top = order * bits - 1; /* the highest bit of a key */
    Py_ssize_t i = 0, j = 0;
    while (i < hn || j < rn) {
        i64 key;
        int from_hyp = j >= rn || (i < hn && h[i] <= r[j]);
        key = from_hyp ? h[i] : r[j];
        if (previous >= 0 && previous != key) {
            /* the ranks previous and key share: those above the highest bit where they differ */
            int shared = (top - highest_bit((unsigned long long)(previous ^ key))) / bits;
            /* the groups of orders shared + 1 .. order end at previous; those running past the
             * sentence end (an n-th rank of 0: every later rank is 0 too) count nothing */
            for (int n = shared + 1; n <= order; n++) {
                if ((previous >> ((order - n) * bits)) & mask) {
                    i64 hh = seen_h - start_h[n], rr = seen_r - start_r[n];
                    row[n - 1] += hh < rr ? hh : rr;
                }
                start_h[n] = seen_h;
                start_r[n] = seen_r;
            }
        }
        seen_h += from_hyp;
        seen_r += !from_hyp;
        i += from_hyp;
        j += !from_hyp;
        previous = key;
    }
    if (previous >= 0) {
        for (int n = 1; n <= order; n++) {
            if ((previous >> ((order - n) * bits)) & mask) {
                i64 hh = seen_h - start_h[n], rr = seen_r - start_r[n];
                row[n - 1] += hh < rr ? hh : rr;
            }
        }
    }
}

/* row[n - 1] += sum over hypothesis n-grams of min(hyp count, largest reference count); reference k's
 * sorted keys are ref[lo[k]:hi[k]].  pointer: scratch of refs entries. */
static void
walk_max(const i64 *h, Py_ssize_t hn, const i64 *ref, const i64 *lo, const i64 *hi, Py_ssize_t refs, int order,
         int bits, i64 *row, i64 *pointer)
{
    i64 mask = ((i64)1 << bits) - 1;
    for (int n = 1; n <= order; n++) {
        int shift = (order - n) * bits;
        for (Py_ssize_t k = 0; k < refs; k++) {
            pointer[k] = lo[k];
        }
        int found = 0;
        Py_ssize_t p = 0;
        while (p < hn) {
            i64 gram = h[p] >> shift;
            Py_ssize_t q = p + 1;
            while (q < hn && (h[q] >> shift) == gram) {
                q++;
            }
            if (gram & mask) { /* the n-gram ends inside the sentence */
                i64 most = 0;
                for (Py_ssize_t k = 0; k < refs; k++) {
                    i64 at = pointer[k], end = hi[k], count = 0;
                    while (at < end && (ref[at] >> shift) < gram) {
                        at++;
                    }
                    while (at < end && (ref[at] >> shift) == gram) {
                        at++;
                        count++;
                    }
                    pointer[k] = at;
                    if (count > most) {
                        most = count;
                    }
                }
                if (most) {
                    row[n - 1] += (q - p) < most ? (q - p) : most;
                    found = 1;
                }
            }
            p = q;
        }
        if (!found) {
            break; /* no longer n-gram can match */
        }
    }
}

/* ---- block entry points ----------------------------------------------------------------- */

static int
check_offsets(Py_buffer *offsets, Py_ssize_t refs, Py_ssize_t units, Py_ssize_t *segments, const char *name)
{
    Py_ssize_t count = COUNT(*offsets);
    if (refs < 1 || count % refs != 0 || count / refs < 1) {
        PyErr_Format(PyExc_ValueError, "%s: expected refs x (segments + 1) offsets, got %zd for %zd refs", name,
                     count, refs);
        return -1;
    }
    *segments = count / refs - 1;
    const i64 *o = DATA(*offsets);
    for (Py_ssize_t k = 0; k < refs; k++) {
        for (Py_ssize_t s = 0; s <= *segments; s++) {
            i64 v = o[k * (*segments + 1) + s];
            if (v < 0 || v > units || (s && v < o[k * (*segments + 1) + s - 1])) {
                PyErr_Format(PyExc_ValueError, "%s: offsets must rise within 0..%zd", name, units);
                return -1;
            }
        }
    }
    return 0;
}

static PyObject *
alphabets(PyObject *self, PyObject *args)
{
    PyObject *o_units, *o_offsets, *o_alphabet, *o_a_offsets;
    Py_ssize_t refs;
    if (!PyArg_ParseTuple(args, "OOnOO", &o_units, &o_offsets, &refs, &o_alphabet, &o_a_offsets)) {
        return NULL;
    }
    Py_buffer units, offsets, alphabet, a_offsets;
    if (int64_buffer(o_units, &units, 0, "ref_units") < 0) {
        return NULL;
    }
    if (int64_buffer(o_offsets, &offsets, 0, "ref_offsets") < 0) {
        PyBuffer_Release(&units);
        return NULL;
    }
    if (int64_buffer(o_alphabet, &alphabet, 1, "alphabet_out") < 0) {
        PyBuffer_Release(&units);
        PyBuffer_Release(&offsets);
        return NULL;
    }
    if (int64_buffer(o_a_offsets, &a_offsets, 1, "a_offsets_out") < 0) {
        PyBuffer_Release(&units);
        PyBuffer_Release(&offsets);
        PyBuffer_Release(&alphabet);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t segments;
    if (check_offsets(&offsets, refs, COUNT(units), &segments, "ref_offsets") < 0) {
        goto done;
    }
    if (COUNT(alphabet) < COUNT(units) || COUNT(a_offsets) < segments + 1) {
        PyErr_SetString(PyExc_ValueError, "alphabets: output buffers too small");
        goto done;
    }
    const i64 *u = DATA(units), *o = DATA(offsets);
    i64 *out = DATA(alphabet), *ao = DATA(a_offsets);
    i64 widest = 0;
    Py_ssize_t largest = 0;
    for (Py_ssize_t s = 0; s < segments; s++) {
        Py_ssize_t size = 0;
        for (Py_ssize_t k = 0; k < refs; k++) {
            size += o[k * (segments + 1) + s + 1] - o[k * (segments + 1) + s];
        }
        largest = size > largest ? size : largest;
    }
    i64 *pool = PyMem_Malloc((size_t)(largest ? largest : 1) * sizeof(i64));
    if (!pool) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    ao[0] = 0;
    for (Py_ssize_t s = 0; s < segments; s++) {
        Py_ssize_t at = 0;
        for (Py_ssize_t k = 0; k < refs; k++) {
            for (i64 p = o[k * (segments + 1) + s]; p < o[k * (segments + 1) + s + 1]; p++) {
                pool[at++] = u[p];
            }
        }
        qsort(pool, (size_t)at, sizeof(i64), compare_i64);
        i64 count = 0;
        for (Py_ssize_t p = 0; p < at; p++) {
            if (p == 0 || pool[p] != pool[p - 1]) {
                out[ao[s] + count++] = pool[p];
            }
        }
        ao[s + 1] = ao[s] + count;
        widest = count > widest ? count : widest;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(pool);
    result = Py_BuildValue("(LL)", (long long)ao[segments], (long long)widest);
done:
    PyBuffer_Release(&units);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&alphabet);
    PyBuffer_Release(&a_offsets);
    return result;
}

/* rank table: table[unit] = rank of unit in the current segment's alphabet, 0 elsewhere */
typedef struct {
    int32_t *table;
    i64 size;
} Ranks;

static int
ranks_open(Ranks *r, const i64 *alphabet, Py_ssize_t count)
{
    i64 largest = 0;
    for (Py_ssize_t a = 0; a < count; a++) {
        if (alphabet[a] < 0) {
            PyErr_SetString(PyExc_ValueError, "units must not be negative");
            return -1;
        }
        largest = alphabet[a] > largest ? alphabet[a] : largest;
    }
    r->size = largest + 1;
    r->table = PyMem_Calloc((size_t)r->size, sizeof(int32_t));
    if (!r->table) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* ranks of units[0:n] in alphabet[a_lo:a_hi] (unknown where absent) */
static void
ranks_of(Ranks *r, const i64 *units, Py_ssize_t n, const i64 *alphabet, i64 a_lo, i64 a_hi, i64 unknown, i64 *out)
{
    for (i64 a = a_lo; a < a_hi; a++) {
        r->table[alphabet[a]] = (int32_t)(a - a_lo + 1);
    }
    for (Py_ssize_t p = 0; p < n; p++) {
        i64 unit = units[p];
        i64 rank = (unit >= 0 && unit < r->size) ? r->table[unit] : 0;
        out[p] = rank ? rank : unknown;
    }
    for (i64 a = a_lo; a < a_hi; a++) {
        r->table[alphabet[a]] = 0;
    }
}

/* *out = a scratch array of count int64 (freed by the caller, also on failure) */
static int
scratch(i64 **out, i64 count)
{
    *out = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof(i64));
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* ranks 1..widest must lie below unknown (all ones) */
static int
check_widest(i64 widest, int bits)
{
    if (widest >= ((i64)1 << bits) - 1) {
        PyErr_Format(PyExc_ValueError, "%d bits cannot rank %lld distinct units", bits, (long long)widest);
        return -1;
    }
    return 0;
}

static int
check_order(int order, int bits)
{
    if (order < 1 || bits < 1 || order > MAX_ORDER || (long)order * bits > 63) {
        PyErr_Format(PyExc_ValueError, "order %d x %d bits does not fit a 63-bit key", order, bits);
        return -1;
    }
    return 0;
}

static PyObject *
reference_keys(PyObject *self, PyObject *args)
{
    PyObject *o_units, *o_offsets, *o_alphabet, *o_a_offsets, *o_keys;
    Py_ssize_t refs;
    int order, bits;
    if (!PyArg_ParseTuple(args, "OOnOOiiO", &o_units, &o_offsets, &refs, &o_alphabet, &o_a_offsets, &order, &bits,
                          &o_keys)) {
        return NULL;
    }
    if (check_order(order, bits) < 0) {
        return NULL;
    }
    Py_buffer b[5] = {{0}};
    PyObject *objects[5] = {o_units, o_offsets, o_alphabet, o_a_offsets, o_keys};
    const char *names[5] = {"ref_units", "ref_offsets", "alphabet", "a_offsets", "keys_out"};
    int held = 0;
    PyObject *result = NULL;
    Ranks table = {NULL, 0};
    i64 *ranks = NULL, *start = NULL;
    for (; held < 5; held++) {
        if (int64_buffer(objects[held], &b[held], held == 4, names[held]) < 0) {
            goto done;
        }
    }
    Py_ssize_t segments;
    if (check_offsets(&b[1], refs, COUNT(b[0]), &segments, "ref_offsets") < 0) {
        goto done;
    }
    if (check_offsets(&b[3], 1, COUNT(b[2]), &segments, "a_offsets") < 0 || segments != COUNT(b[1]) / refs - 1 ||
        COUNT(b[4]) < COUNT(b[0])) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "reference_keys: sizes do not agree");
        }
        goto done;
    }
    const i64 *u = DATA(b[0]), *o = DATA(b[1]), *alpha = DATA(b[2]), *ao = DATA(b[3]);
    i64 *keys = DATA(b[4]);
    i64 widest = 0, longest = 0;
    for (Py_ssize_t s = 0; s < segments; s++) {
        widest = ao[s + 1] - ao[s] > widest ? ao[s + 1] - ao[s] : widest;
        for (Py_ssize_t k = 0; k < refs; k++) {
            i64 len = o[k * (segments + 1) + s + 1] - o[k * (segments + 1) + s];
            longest = len > longest ? len : longest;
        }
    }
    if (check_widest(widest, bits) < 0 || ranks_open(&table, alpha, COUNT(b[2])) < 0 ||
        scratch(&ranks, longest + 1) < 0 || scratch(&start, widest + 3) < 0) {
        goto done;
    }
    i64 unknown = ((i64)1 << bits) - 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < refs; k++) {
        for (Py_ssize_t s = 0; s < segments; s++) {
            i64 lo = o[k * (segments + 1) + s], hi = o[k * (segments + 1) + s + 1];
            ranks_of(&table, u + lo, hi - lo, alpha, ao[s], ao[s + 1], unknown, ranks);
            sorted_keys(ranks, hi - lo, order, bits, ao[s + 1] - ao[s], keys + lo, start);
        }
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyMem_Free(ranks);
    PyMem_Free(start);
    PyMem_Free(table.table);
    for (int i = 0; i < held; i++) {
        PyBuffer_Release(&b[i]);
    }
    return result;
}

static PyObject *
matches(PyObject *self, PyObject *args)
{
    PyObject *objects[7];
    Py_ssize_t refs;
    int order, bits, clip_to_max;
    if (!PyArg_ParseTuple(args, "OOOOOOniipO", &objects[0], &objects[1], &objects[2], &objects[3], &objects[4],
                          &objects[5], &refs, &order, &bits, &clip_to_max, &objects[6])) {
        return NULL;
    }
    if (check_order(order, bits) < 0) {
        return NULL;
    }
    const char *names[7] = {"hyp_units", "hyp_offsets", "alphabet", "a_offsets", "ref_keys", "ref_offsets", "out"};
    Py_buffer b[7] = {{0}};
    int held = 0;
    PyObject *result = NULL;
    Ranks table = {NULL, 0};
    i64 *ranks = NULL, *keys = NULL, *start = NULL, *bounds = NULL;
    for (; held < 7; held++) {
        if (int64_buffer(objects[held], &b[held], held == 6, names[held]) < 0) {
            goto done;
        }
    }
    Py_ssize_t segments, check;
    if (check_offsets(&b[1], 1, COUNT(b[0]), &segments, "hyp_offsets") < 0 ||
        check_offsets(&b[3], 1, COUNT(b[2]), &check, "a_offsets") < 0) {
        goto done;
    }
    if (check != segments || check_offsets(&b[5], refs, COUNT(b[4]), &check, "ref_offsets") < 0) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "matches: %zd hypothesis segments, %zd in the alphabet", segments, check);
        }
        goto done;
    }
    Py_ssize_t width = clip_to_max ? 1 : refs;
    if (check != segments || COUNT(b[6]) != segments * order * width) {
        PyErr_Format(PyExc_ValueError, "matches: %zd hypothesis segments, %zd reference segments, out of %zd",
                     segments, check, COUNT(b[6]));
        goto done;
    }
    const i64 *u = DATA(b[0]), *ho = DATA(b[1]), *alpha = DATA(b[2]), *ao = DATA(b[3]), *ref = DATA(b[4]),
              *ro = DATA(b[5]);
    i64 *out = DATA(b[6]);
    i64 widest = 0, longest = 0;
    for (Py_ssize_t s = 0; s < segments; s++) {
        widest = ao[s + 1] - ao[s] > widest ? ao[s + 1] - ao[s] : widest;
        longest = ho[s + 1] - ho[s] > longest ? ho[s + 1] - ho[s] : longest;
    }
    if (check_widest(widest, bits) < 0 || ranks_open(&table, alpha, COUNT(b[2])) < 0 ||
        scratch(&ranks, longest + 1) < 0 || scratch(&keys, longest + 1) < 0 || scratch(&start, widest + 3) < 0 ||
        scratch(&bounds, 3 * refs + 1) < 0) {
        goto done;
    }
    i64 unknown = ((i64)1 << bits) - 1;
    i64 *lo = bounds, *hi = bounds + refs, *pointer = bounds + 2 * refs;
    i64 row[MAX_ORDER];
    memset(out, 0, (size_t)COUNT(b[6]) * sizeof(i64));
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t s = 0; s < segments; s++) {
        i64 n = ho[s + 1] - ho[s];
        ranks_of(&table, u + ho[s], n, alpha, ao[s], ao[s + 1], unknown, ranks);
        sorted_keys(ranks, n, order, bits, ao[s + 1] - ao[s], keys, start);
        for (Py_ssize_t k = 0; k < refs; k++) {
            lo[k] = ro[k * (segments + 1) + s];
            hi[k] = ro[k * (segments + 1) + s + 1];
        }
        if (refs == 1 || !clip_to_max) {
            for (Py_ssize_t k = 0; k < refs; k++) {
                memset(row, 0, sizeof(row));
                walk(keys, n, ref + lo[k], hi[k] - lo[k], order, bits, row);
                for (int m = 0; m < order; m++) {
                    out[(s * order + m) * width + k] = row[m];
                }
            }
        }
        else {
            memset(row, 0, sizeof(row));
            walk_max(keys, n, ref, lo, hi, refs, order, bits, row, pointer);
            for (int m = 0; m < order; m++) {
                out[s * order + m] = row[m];
            }
        }
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyMem_Free(ranks);
    PyMem_Free(keys);
    PyMem_Free(start);
    PyMem_Free(bounds);
    PyMem_Free(table.table);
    for (int i = 0; i < held; i++) {
        PyBuffer_Release(&b[i]);
    }
    return result;
}

/* ---- one-line entry points -------------------------------------------------------------- */

/* out[p] = vocab[tokens[p]] (tokens: a list, vocab: a dict), missing where a token is absent; every
 * value found must lie in lowest..missing - 1 */
static int
token_ids(PyObject *tokens, PyObject *vocab, i64 lowest, i64 missing, i64 *out)
{
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    for (Py_ssize_t p = 0; p < n; p++) {
        PyObject *id = PyDict_GetItemWithError(vocab, PyList_GET_ITEM(tokens, p));
        if (id == NULL) {
            if (PyErr_Occurred()) {
                return -1;
            }
            out[p] = missing;
            continue;
        }
        long long value = PyLong_AsLongLong(id);
        if (value < lowest || value >= missing) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_ValueError, "vocabulary ids must lie in %lld..%lld, got %lld", (long long)lowest,
                             (long long)missing - 1, value);
            }
            return -1;
        }
        out[p] = value;
    }
    return 0;
}

static int
check_tokens(PyObject *tokens, PyObject *vocab)
{
    if (!PyList_Check(tokens) || !PyDict_Check(vocab)) {
        PyErr_Format(PyExc_TypeError, "expected a list of tokens and a dict, got %.100s and %.100s",
                     Py_TYPE(tokens)->tp_name, Py_TYPE(vocab)->tp_name);
        return -1;
    }
    return 0;
}

/* ranks of a list of tokens in vocab (1..unknown - 1; unknown where absent); returns the count or -1 */
static Py_ssize_t
token_ranks(PyObject *tokens, PyObject *vocab, i64 unknown, i64 **out)
{
    if (check_tokens(tokens, vocab) < 0) {
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    i64 *ranks = PyMem_Malloc((size_t)(n + 1) * sizeof(i64));
    if (!ranks) {
        PyErr_NoMemory();
        return -1;
    }
    if (token_ids(tokens, vocab, 1, unknown, ranks) < 0) {
        PyMem_Free(ranks);
        return -1;
    }
    *out = ranks;
    return n;
}

static PyObject *
ids(PyObject *self, PyObject *args)
{
    PyObject *tokens, *vocab;
    long long missing;
    if (!PyArg_ParseTuple(args, "OOL", &tokens, &vocab, &missing) || check_tokens(tokens, vocab) < 0) {
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, PyList_GET_SIZE(tokens) * 8);
    if (out && token_ids(tokens, vocab, 0, missing, (i64 *)PyBytes_AS_STRING(out)) < 0) {
        Py_CLEAR(out);
    }
    return out;
}

static PyObject *
line_keys(PyObject *self, PyObject *args)
{
    PyObject *tokens, *vocab;
    int order, bits;
    if (!PyArg_ParseTuple(args, "OOii", &tokens, &vocab, &order, &bits) || check_order(order, bits) < 0) {
        return NULL;
    }
    i64 unknown = ((i64)1 << bits) - 1;
    i64 *ranks;
    Py_ssize_t n = token_ranks(tokens, vocab, unknown, &ranks);
    if (n < 0) {
        return NULL;
    }
    i64 alpha = PyDict_GET_SIZE(vocab);
    i64 *start = PyMem_Malloc((size_t)(alpha + 3) * sizeof(i64));
    PyObject *result = PyBytes_FromStringAndSize(NULL, n * 8);
    if (!start || !result) {
        PyMem_Free(ranks);
        PyMem_Free(start);
        Py_XDECREF(result);
        return start ? NULL : PyErr_NoMemory();
    }
    sorted_keys(ranks, n, order, bits, alpha, (i64 *)PyBytes_AS_STRING(result), start);
    PyMem_Free(ranks);
    PyMem_Free(start);
    return result;
}

static PyObject *
line_matches(PyObject *self, PyObject *args)
{
    PyObject *tokens, *vocab, *o_keys, *o_bounds;
    int order, bits;
    if (!PyArg_ParseTuple(args, "OOOOii", &tokens, &vocab, &o_keys, &o_bounds, &order, &bits) ||
        check_order(order, bits) < 0) {
        return NULL;
    }
    Py_buffer keys, bounds;
    if (int64_buffer(o_keys, &keys, 0, "ref_keys") < 0) {
        return NULL;
    }
    if (int64_buffer(o_bounds, &bounds, 0, "ref_bounds") < 0) {
        PyBuffer_Release(&keys);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t refs = COUNT(bounds) - 1, check;
    if (refs < 1 || check_offsets(&bounds, 1, COUNT(keys), &check, "ref_bounds") < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "ref_bounds: expected at least one reference");
        }
        goto done;
    }
    i64 unknown = ((i64)1 << bits) - 1;
    i64 *ranks = NULL;
    Py_ssize_t n = token_ranks(tokens, vocab, unknown, &ranks);
    if (n < 0) {
        goto done;
    }
    i64 alpha = PyDict_GET_SIZE(vocab);
    i64 *work = PyMem_Malloc((size_t)(n + alpha + 3 + refs + 1) * sizeof(i64));
    if (!work) {
        PyMem_Free(ranks);
        PyErr_NoMemory();
        goto done;
    }
    i64 *hyp = work, *start = work + n, *pointer = work + n + alpha + 3;
    sorted_keys(ranks, n, order, bits, alpha, hyp, start);
    i64 row[MAX_ORDER] = {0};
    const i64 *b = DATA(bounds);
    if (refs == 1) {
        walk(hyp, n, DATA(keys) + b[0], b[1] - b[0], order, bits, row);
    }
    else {
        walk_max(hyp, n, DATA(keys), b, b + 1, refs, order, bits, row, pointer);
    }
    PyMem_Free(ranks);
    PyMem_Free(work);
    result = PyList_New(order);
    for (int m = 0; result && m < order; m++) {
        PyObject *value = PyLong_FromLongLong(row[m]);
        if (!value) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, m, value);
    }
done:
    PyBuffer_Release(&keys);
    PyBuffer_Release(&bounds);
    return result;
}

static PyMethodDef methods[] = {
    {"alphabets", alphabets, METH_VARARGS, "Per segment the sorted distinct units of its references."},
    {"reference_keys", reference_keys, METH_VARARGS, "Sorted packed keys of every reference sentence."},
    {"matches", matches, METH_VARARGS, "Clipped matches of every segment of a hypothesis stream."},
    {"line_keys", line_keys, METH_VARARGS, "Sorted packed keys of one token list."},
    {"line_matches", line_matches, METH_VARARGS, "BLEU's clipped matches of one token list."},
    {"ids", ids, METH_VARARGS, "[vocab.get(t, missing) for t in tokens] as int64 bytes (ids 0..missing - 1)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ngram_matches",
    "Clipped n-gram matches in C (see evalpipe.evaluators.kernels.ngram_matches).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__ngram_matches(void)
{
    return PyModule_Create(&module);
}
