/* evalpipe.evaluators.kernels._tokenize_13a: sacrebleu's 13a tokenizer (mteval-v13a.pl) in C, built at install
 * when a C compiler is there (setup.py, optional=True); evaluators/kernels/tokenize_13a.py is the pure Python
 * path and the reference it is tested against (tests/test_tokenize_13a.py, with sacrebleu itself).
 *
 * sacrebleu (tokenizers/tokenizer_13a.py and tokenizer_re.py, Post 2018) does, in this order:
 *   1. line.replace('<skipped>', ''), .replace('-\n', ''), .replace('\n', ' ');
 *   2. if '&' in line: .replace('&quot;', '"'), ('&amp;', '&'), ('&lt;', '<'), ('&gt;', '>');
 *   3. on f' {line} ' four re.sub passes, each left to right over non-overlapping matches:
 *        ([\{-\~\[-\` -\&\(-\+\:-\@\/])  -> ' \1 '     (one ASCII symbol or space)
 *        ([^0-9])([\.,])                  -> '\1 \2 '
 *        ([\.,])([^0-9])                  -> ' \1 \2'
 *        ([0-9])(-)                       -> '\1 \2 '
 *   4. ' '.join(line.split()); BLEU then splits that on whitespace again.
 * Every step here is that step, on a UCS-4 copy of the line: str.replace is one left-to-right pass
 * that does not rescan what it wrote; a re.sub with a fixed-width pattern (one or two characters,
 * no empty match) tries each position in turn and resumes after a match, which is what the two-
 * character scans below do.  [0-9] is the ASCII digits (a str pattern's class, not \d); the split
 * is str.split()'s whitespace (Py_UNICODE_ISSPACE).
 *
 *   tokens(line) -> list of str                  the 13a tokens of one line
 *   tokens_flat(lines) -> (tokens, counts)        every line's tokens end to end, and their counts
 *   vocabulary() -> capsule                      an empty vocabulary of tokens (open addressing, FNV-1a)
 *   ids_flat(lines, vocabulary, grow, missing) -> (ids, counts)
 *       the tokens of every line.rstrip() (as sacrebleu's BLEU tokenizes) as word ids (int64 bytes),
 *       without a Python object per token: a new token gets the next id when grow (references), else
 *       `missing` (hypotheses); counts as int64 bytes
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_UCS4 *data;
    Py_ssize_t length, capacity;
} Text;

static int
reserve(Text *t, Py_ssize_t need)
{
    if (need <= t->capacity) {
        return 0;
    }
    Py_ssize_t capacity = need < 256 ? 256 : need * 2;
    Py_UCS4 *data = PyMem_Realloc(t->data, (size_t)capacity * sizeof(Py_UCS4));
    if (!data) {
        PyErr_NoMemory();
        return -1;
    }
    t->data = data;
    t->capacity = capacity;
    return 0;
}

static void
swap(Text *a, Text *b)
{
    Text t = *a;
    *a = *b;
    *b = t;
}

static int
contains(const Text *t, Py_UCS4 c)
{
    for (Py_ssize_t i = 0; i < t->length; i++) {
        if (t->data[i] == c) {
            return 1;
        }
    }
    return 0;
}

/* *in = in.replace(pattern, replacement) (ASCII C strings), through scratch *out */
static int
replace(Text *in, Text *out, const char *pattern, const char *replacement)
{
    Py_ssize_t m = (Py_ssize_t)strlen(pattern), r = (Py_ssize_t)strlen(replacement);
    if (reserve(out, in->length * (r > m ? r : m) / m + 1) < 0) {
        return -1;
    }
    Py_ssize_t o = 0, i = 0, n = in->length;
    const Py_UCS4 *s = in->data;
    while (i < n) {
        if (s[i] == (Py_UCS4)(unsigned char)pattern[0] && i + m <= n) {
            Py_ssize_t k = 1;
            while (k < m && s[i + k] == (Py_UCS4)(unsigned char)pattern[k]) {
                k++;
            }
            if (k == m) {
                for (Py_ssize_t j = 0; j < r; j++) {
                    out->data[o++] = (unsigned char)replacement[j];
                }
                i += m;
                continue;
            }
        }
        out->data[o++] = s[i++];
    }
    out->length = o;
    swap(in, out);
    return 0;
}

static int
is_symbol(Py_UCS4 c) /* [\{-\~\[-\` -\&\(-\+\:-\@\/] */
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
           (c >= ':' && c <= '@') || c == '/';
}

static int
is_digit(Py_UCS4 c)
{
    return c >= '0' && c <= '9';
}

static int
is_mark(Py_UCS4 c)
{
    return c == '.' || c == ',';
}

/* *in = one re.sub pass of a two-character rule over *in, through scratch *out:
 *   rule 2: ([^0-9])([\.,]) -> '\1 \2 ',  rule 3: ([\.,])([^0-9]) -> ' \1 \2',  rule 4: ([0-9])(-) -> '\1 \2 '
 * re.sub takes the leftmost match at or after where the last one ended, so only the positions of the rule's
 * anchor (a mark, or a dash) are visited and the text between matches is copied as a run. */
static int
pair_pass(Text *in, Text *out, int rule)
{
    if (reserve(out, 2 * in->length) < 0) {
        return -1;
    }
    const Py_UCS4 *s = in->data;
    Py_ssize_t n = in->length, o = 0, resume = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_UCS4 c = s[j];
        if (rule == 4 ? c != '-' : !is_mark(c)) {
            continue;
        }
        /* the match's first character: the one before the anchor (rules 2, 4) or the anchor (rule 3) */
        Py_ssize_t i = rule == 3 ? j : j - 1;
        int hit = i >= resume && i + 1 < n &&
                  (rule == 2 ? !is_digit(s[i]) : rule == 3 ? !is_digit(s[i + 1]) : is_digit(s[i]));
        if (!hit) {
            continue;
        }
        memcpy(out->data + o, s + resume, sizeof(Py_UCS4) * (size_t)(i - resume));
        o += i - resume;
        if (rule == 3) {
            out->data[o++] = ' ';
        }
        out->data[o++] = s[i];
        out->data[o++] = ' ';
        out->data[o++] = s[i + 1];
        if (rule != 3) {
            out->data[o++] = ' ';
        }
        resume = i + 2;
        j = i + 1;
    }
    memcpy(out->data + o, s + resume, sizeof(Py_UCS4) * (size_t)(n - resume));
    out->length = o + n - resume;
    swap(in, out);
    return 0;
}

/* pass 1 of step 3 on ' ' + s[0:n] + ' ' into *out: each ASCII symbol c becomes ' c ' -- except the space
 * itself, kept as one ' ' (its ' \1 ' only lengthens a run of spaces, which no later rule reads as more than
 * a space and the split removes); *marks and *dashes say whether rules 2-4 can act, *special whether a
 * '<', '\n' or '&' was seen (steps 1 and 2 could then have acted: the caller starts over).  One loop per
 * string kind, so no character is read through a switch. */
/* the class of each ASCII character for pass 1: a symbol (padded), a mark or a dash (rules 2-4 can act),
 * special ('<', '&', '\n': steps 1-2 can act); filled at import from is_symbol and the rules' characters */
enum { SYMBOL = 1, MARK = 2, DASH = 4, SPECIAL = 8 };
static unsigned char ascii_class[128];

#define SYMBOLS_LOOP(TYPE)                                                                                    \
    for (Py_ssize_t i = 0; i < n; i++) {                                                                      \
        Py_UCS4 c = ((const TYPE *)s)[i];                                                                     \
        unsigned int k = c < 128 ? ascii_class[c] : 0;                                                        \
        seen |= k;                                                                                            \
        if (k & SYMBOL) {                                                                                     \
            d[o++] = ' ';                                                                                     \
            d[o++] = c;                                                                                       \
            d[o++] = ' ';                                                                                     \
        }                                                                                                     \
        else {                                                                                                \
            d[o++] = c;                                                                                       \
        }                                                                                                     \
    }

static int
symbols_pass(int kind, const void *s, Py_ssize_t n, Text *out, int *marks, int *dashes, int *special)
{
    if (reserve(out, 3 * n + 8) < 0) {
        return -1;
    }
    Py_UCS4 *d = out->data;
    Py_ssize_t o = 0;
    unsigned int seen = 0;
    d[o++] = ' ';
    if (kind == PyUnicode_1BYTE_KIND) {
        SYMBOLS_LOOP(Py_UCS1)
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        SYMBOLS_LOOP(Py_UCS2)
    }
    else {
        SYMBOLS_LOOP(Py_UCS4)
    }
    d[o++] = ' ';
    out->length = o;
    *marks |= (seen & MARK) != 0;
    *dashes |= (seen & DASH) != 0;
    *special |= (seen & SPECIAL) != 0;
    return 0;
}

/* the four re.sub passes of step 3 on ' ' + in + ' ', through scratch *out; the result is in *in */
static int
rules(Text *in, Text *out)
{
    int marks = 0, dashes = 0, special = 0;
    if (symbols_pass(PyUnicode_4BYTE_KIND, in->data, in->length, out, &marks, &dashes, &special) < 0) {
        return -1;
    }
    swap(in, out);
    if (marks && (pair_pass(in, out, 2) < 0 || pair_pass(in, out, 3) < 0)) {
        return -1;
    }
    if (dashes && pair_pass(in, out, 4) < 0) {
        return -1;
    }
    return 0;
}

/* steps 1-3 on line (its trailing whitespace first removed when rstrip) into *a (through scratch *b):
 * 0, or -1 with an exception */
static int
normalize_line(PyObject *line, Text *a, Text *b, int rstrip)
{
    if (!PyUnicode_Check(line)) {
        PyErr_Format(PyExc_TypeError, "13a tokenizer: expected str, got %.100s", Py_TYPE(line)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(line) < 0) {
        return -1;
    }
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    while (rstrip && n > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, n - 1))) {
        n--;
    }
    int marks = 0, dashes = 0, special = 0; /* special: '<', '\n' or '&', the replacements of steps 1-2 can act */
    if (symbols_pass(kind, data, n, a, &marks, &dashes, &special) < 0) {
        return -1;
    }
    if (!special) { /* steps 1 and 2 change nothing: pass 1 read the line itself */
        if (marks && (pair_pass(a, b, 2) < 0 || pair_pass(a, b, 3) < 0)) {
            return -1;
        }
        return dashes && pair_pass(a, b, 4) < 0 ? -1 : 0;
    }
    if (reserve(a, n + 1) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        a->data[i] = PyUnicode_READ(kind, data, i);
    }
    a->length = n;
    if (replace(a, b, "<skipped>", "") < 0 || replace(a, b, "-\n", "") < 0 || replace(a, b, "\n", " ") < 0) {
        return -1;
    }
    if (contains(a, '&') && (replace(a, b, "&quot;", "\"") < 0 || replace(a, b, "&amp;", "&") < 0 ||
                             replace(a, b, "&lt;", "<") < 0 || replace(a, b, "&gt;", ">") < 0)) {
        return -1;
    }
    return rules(a, b);
}

/* the start of the next whitespace-delimited token of s[*i:n], *i then past its end; -1 when there is none */
static Py_ssize_t
next_token(const Py_UCS4 *s, Py_ssize_t n, Py_ssize_t *i)
{
    while (*i < n && Py_UNICODE_ISSPACE(s[*i])) {
        (*i)++;
    }
    if (*i == n) {
        return -1;
    }
    Py_ssize_t start = *i;
    while (*i < n && !Py_UNICODE_ISSPACE(s[*i])) {
        (*i)++;
    }
    return start;
}

/* append the 13a tokens of line to list; the number appended, or -1 */
static Py_ssize_t
line_tokens(PyObject *line, PyObject *list, Text *a, Text *b)
{
    if (normalize_line(line, a, b, 0) < 0) {
        return -1;
    }
    Py_ssize_t count = 0, i = 0, start;
    const Py_UCS4 *s = a->data;
    Py_ssize_t n = a->length;
    while ((start = next_token(s, n, &i)) >= 0) {
        PyObject *token = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, s + start, i - start);
        if (!token || PyList_Append(list, token) < 0) {
            Py_XDECREF(token);
            return -1;
        }
        Py_DECREF(token);
        count++;
    }
    return count;
}

static PyObject *
tokens(PyObject *self, PyObject *line)
{
    Text a = {0}, b = {0};
    PyObject *list = PyList_New(0);
    if (list && line_tokens(line, list, &a, &b) < 0) {
        Py_CLEAR(list);
    }
    PyMem_Free(a.data);
    PyMem_Free(b.data);
    return list;
}

static PyObject *
tokens_flat(PyObject *self, PyObject *lines)
{
    PyObject *sequence = PySequence_Fast(lines, "13a tokenizer: expected a sequence of str");
    if (!sequence) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    PyObject *all = PyList_New(0), *counts = PyList_New(n), *result = NULL;
    Text a = {0}, b = {0};
    if (!all || !counts) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t count = line_tokens(PySequence_Fast_GET_ITEM(sequence, i), all, &a, &b);
        PyObject *value = count < 0 ? NULL : PyLong_FromSsize_t(count);
        if (!value) {
            goto done;
        }
        PyList_SET_ITEM(counts, i, value);
    }
    result = PyTuple_Pack(2, all, counts);
done:
    PyMem_Free(a.data);
    PyMem_Free(b.data);
    Py_XDECREF(all);
    Py_XDECREF(counts);
    Py_DECREF(sequence);
    return result;
}

/* ---- a vocabulary of tokens, in C: word ids without a Python object per token ----------------- */

typedef struct {
    uint64_t hash;
    Py_ssize_t offset, length; /* the token: arena[offset:offset + length] */
    int64_t id;                /* -1: an empty slot */
} Slot;

typedef struct {
    Slot *slots;
    Py_ssize_t capacity, used; /* capacity: a power of two, at most half full */
    Py_UCS4 *arena;
    Py_ssize_t arena_length, arena_capacity;
} Vocabulary;

#define VOCABULARY "evalpipe.evaluators.kernels._tokenize_13a.Vocabulary"

static void
vocabulary_free(PyObject *capsule)
{
    Vocabulary *v = PyCapsule_GetPointer(capsule, VOCABULARY);
    if (v) {
        PyMem_Free(v->slots);
        PyMem_Free(v->arena);
        PyMem_Free(v);
    }
}

static int
slots_alloc(Vocabulary *v, Py_ssize_t capacity)
{
    Slot *slots = PyMem_Malloc(sizeof(Slot) * (size_t)capacity);
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < capacity; i++) {
        slots[i].id = -1;
    }
    Slot *old = v->slots;
    Py_ssize_t old_capacity = v->capacity;
    v->slots = slots;
    v->capacity = capacity;
    for (Py_ssize_t i = 0; i < old_capacity; i++) { /* re-place the old slots */
        if (old[i].id >= 0) {
            Py_ssize_t at = (Py_ssize_t)(old[i].hash & (uint64_t)(capacity - 1));
            while (slots[at].id >= 0) {
                at = (at + 1) & (capacity - 1);
            }
            slots[at] = old[i];
        }
    }
    PyMem_Free(old);
    return 0;
}

static PyObject *
vocabulary_new(PyObject *self, PyObject *unused)
{
    Vocabulary *v = PyMem_Calloc(1, sizeof(Vocabulary));
    if (!v) {
        return PyErr_NoMemory();
    }
    if (slots_alloc(v, 1024) < 0) {
        PyMem_Free(v);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(v, VOCABULARY, vocabulary_free);
    if (!capsule) {
        PyMem_Free(v->slots);
        PyMem_Free(v);
    }
    return capsule;
}

#define FNV_START 1469598103934665603ULL
#define FNV_STEP(hash, c) (((hash) ^ (uint64_t)(c)) * 1099511628211ULL)

static int
same(const Py_UCS4 *a, const Py_UCS4 *b, Py_ssize_t length)
{
    for (Py_ssize_t i = 0; i < length; i++) {
        if (a[i] != b[i]) {
            return 0;
        }
    }
    return 1;
}

/* the id of s[0:length] (whose FNV-1a hash over the code points is hash); a new id when grow, else missing;
 * -2 when out of memory */
static int64_t
lookup(Vocabulary *v, const Py_UCS4 *s, Py_ssize_t length, uint64_t hash, int grow, int64_t missing)
{
    Py_ssize_t mask = v->capacity - 1, at = (Py_ssize_t)(hash & (uint64_t)mask);
    while (v->slots[at].id >= 0) {
        Slot *slot = &v->slots[at];
        if (slot->hash == hash && slot->length == length && same(v->arena + slot->offset, s, length)) {
            return slot->id;
        }
        at = (at + 1) & mask;
    }
    if (!grow) {
        return missing;
    }
    if (v->arena_length + length > v->arena_capacity) {
        Py_ssize_t capacity = (v->arena_length + length) * 2 + 1024;
        Py_UCS4 *arena = PyMem_Realloc(v->arena, sizeof(Py_UCS4) * (size_t)capacity);
        if (!arena) {
            return -2;
        }
        v->arena = arena;
        v->arena_capacity = capacity;
    }
    memcpy(v->arena + v->arena_length, s, sizeof(Py_UCS4) * (size_t)length);
    Slot *slot = &v->slots[at];
    slot->hash = hash;
    slot->offset = v->arena_length;
    slot->length = length;
    int64_t id = slot->id = v->used++;
    v->arena_length += length;
    if (v->used * 2 > v->capacity && slots_alloc(v, v->capacity * 2) < 0) { /* (slot is freed here) */
        PyErr_Clear();
        return -2;
    }
    return id;
}

/* ids_flat(lines, vocabulary, grow, missing) -> (int64 bytes of every line's token ids end to end, int64 bytes
 * of each line's token count): tokens_flat's tokens, looked up in the vocabulary (new ones get the next ids
 * when grow, else the id `missing`). */
static PyObject *
ids_flat(PyObject *self, PyObject *args)
{
    PyObject *lines, *capsule;
    int grow;
    long long missing;
    if (!PyArg_ParseTuple(args, "OOpL", &lines, &capsule, &grow, &missing)) {
        return NULL;
    }
    Vocabulary *v = PyCapsule_GetPointer(capsule, VOCABULARY);
    if (!v) {
        return NULL;
    }
    PyObject *sequence = PySequence_Fast(lines, "13a tokenizer: expected a sequence of str");
    if (!sequence) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    PyObject *result = NULL;
    Text a = {0}, b = {0};
    int64_t *ids = NULL, *counts = PyMem_Malloc(sizeof(int64_t) * (size_t)(n + 1));
    Py_ssize_t used = 0, capacity = 0;
    if (!counts) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (normalize_line(PySequence_Fast_GET_ITEM(sequence, k), &a, &b, 1) < 0) {
            goto done;
        }
        if (used + a.length > capacity) { /* a line has at most length tokens */
            capacity = (used + a.length) * 2 + 1024;
            int64_t *grown = PyMem_Realloc(ids, sizeof(int64_t) * (size_t)capacity);
            if (!grown) {
                PyErr_NoMemory();
                goto done;
            }
            ids = grown;
        }
        Py_ssize_t count = 0, i = 0, length = a.length;
        const Py_UCS4 *s = a.data;
        for (;;) { /* the whitespace-delimited tokens, each hashed as it is read */
            while (i < length && Py_UNICODE_ISSPACE(s[i])) {
                i++;
            }
            if (i == length) {
                break;
            }
            Py_ssize_t start = i;
            uint64_t hash = FNV_START;
            while (i < length && !Py_UNICODE_ISSPACE(s[i])) {
                hash = FNV_STEP(hash, s[i]);
                i++;
            }
            int64_t id = lookup(v, s + start, i - start, hash, grow, missing);
            if (id == -2) {
                PyErr_NoMemory();
                goto done;
            }
            ids[used++] = id;
            count++;
        }
        counts[k] = count;
    }
    result = Py_BuildValue("(y#y#)", (const char *)ids, (Py_ssize_t)(sizeof(int64_t) * (size_t)used),
                           (const char *)counts, (Py_ssize_t)(sizeof(int64_t) * (size_t)n));
done:
    PyMem_Free(a.data);
    PyMem_Free(b.data);
    PyMem_Free(ids);
    PyMem_Free(counts);
    Py_DECREF(sequence);
    return result;
}

static PyObject *
vocabulary_size(PyObject *self, PyObject *capsule)
{
    Vocabulary *v = PyCapsule_GetPointer(capsule, VOCABULARY);
    return v ? PyLong_FromSsize_t(v->used) : NULL;
}

static PyMethodDef methods[] = {
    {"tokens", tokens, METH_O, "The 13a tokens of one line (sacrebleu's Tokenizer13a(line).split())."},
    {"tokens_flat", tokens_flat, METH_O, "(every line's 13a tokens end to end, each line's token count)."},
    {"vocabulary", vocabulary_new, METH_NOARGS, "A new, empty vocabulary of tokens (for ids_flat)."},
    {"vocabulary_size", vocabulary_size, METH_O, "How many tokens a vocabulary holds."},
    {"ids_flat", ids_flat, METH_VARARGS,
     "(int64 bytes: every line's 13a token ids end to end, int64 bytes: each line's count), from a vocabulary."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tokenize_13a", "sacrebleu's 13a tokenizer in C (see evalpipe.evaluators.kernels.tokenize_13a).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__tokenize_13a(void)
{
    for (Py_UCS4 c = 0; c < 128; c++) {
        ascii_class[c] = (unsigned char)((c != ' ' && is_symbol(c) ? SYMBOL : 0) | (is_mark(c) ? MARK : 0) |
                                         (c == '-' ? DASH : 0) | (c == '<' || c == '&' || c == '\n' ? SPECIAL : 0));
    }
    return PyModule_Create(&module);
}
