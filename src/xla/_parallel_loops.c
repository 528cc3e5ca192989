/* NumPy ufunc inner loops run over the cores without the GIL, on spinning workers (see xla/host_parallel.py).
 *
 * Why: library code (scipy's moments: ~15 ops on 10^5-element arrays, Python between them) spends most of its
 * eager time in elementwise ops on one core, where XLA's executables (JAX) use every core. A Python pool cannot
 * help at that size: its hand-off (a futex wake-up, ~50-100 us on a VM) costs more than the work. These
 * workers are C threads that stay awake `spin_us` after each task, as XLA's and OpenMP's pools do, so the next
 * op finds them; the caller releases the GIL and takes chunks itself, and runs a small op alone (waking them
 * for the next) when they sleep, so an op is never slower than on one core by more than the bookkeeping.
 *
 * A loop is entry `index` of the ufunc's loop table (`functions`/`data`, the head of PyUFuncObject, the same in
 * NumPy 1.26 and 2.x): a loop NumPy has for that type signature, though not always the one its call runs (NumPy
 * 2 dispatches SIMD versions of exp, tan, ... elsewhere); the caller makes only ufuncs whose every correct
 * loop gives the same bits, and only numeric signatures, whose loops never touch Python objects.
 *
 * Python API (`out` is always fresh: it must not overlap an input, since chunks run at once):
 *   configure(ufunc_type, threads, spin_us)    the numpy.ufunc type; worker count + 1; how long they spin
 *   make(ufunc, index, formats) -> loop        formats: each operand's buffer format, the output last
 *   run(loop, out, *ins) -> bool               out = ufunc(*ins), ins broadcast to out's shape; False (nothing
 *                                              written) where an operand is not of the loop's format, or
 *                                              unaligned (NumPy buffers such data for its loops)
 *   reduce(loop, out, x[, start]) -> bool      out[r] = row x[r, :] reduced (x 2-d, out 1-d), the accumulator
 *                                              starting at the bytes `start`, else at the row's first element
 *   copier(format, itemsize) -> loop           copies elements: run(copier, out, view) lays `view` out as `out`
 *   park()                                     spinning workers sleep now (`park_capsule`: for other C code)
 *   stats() -> (runs shared with workers, runs on the caller alone, workers asleep now)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "_loops.h"
#include "_fpmode.h"

#define MAXDIM 64

/* ------------------------------------------------------------------ one task: a loop over an nd space */
typedef struct {
    loop_fn fn;
    void *data;
    int reduce;                            /* 0: elementwise; 1: rows of a 2-d operand reduced (see reduce) */
    Py_ssize_t itemsize;                   /* (reduce: the accumulator's first value is copied) */
    const char *initial;                   /* (reduce: the accumulator's start, or NULL: each row's first) */
    Py_ssize_t elements;                   /* the work, in elements (whether waking workers pays) */
    int nargs, ndim;                       /* after merging dimensions: the last one is the inner loop */
    Py_ssize_t shape[MAXDIM];
    Py_ssize_t strides[MAXARGS][MAXDIM];
    char *base[MAXARGS];
    Py_ssize_t total, chunk, nchunks;
    unsigned fpmode;                       /* the caller's flush bits (_fpmode.h): a worker runs its chunks so */
} task_t;

/* rows [s, e) of a reduction: out[r] = x[r, 0], then the loop adds x[r, 1:] into it as NumPy's reduce calls it
 * (accumulator in, row in, accumulator out: steps 0, row stride, 0) */
static void reduce_rows(const task_t *t, Py_ssize_t s, Py_ssize_t e) {
    int first = t->initial == NULL;   /* no initial value: the row's first element starts the accumulator */
    Py_ssize_t n = t->shape[1] - first, steps[3] = {0, t->strides[1][1], 0};
    for (Py_ssize_t r = s; r < e; r++) {
        char *acc = t->base[0] + r * t->strides[0][0], *row = t->base[1] + r * t->strides[1][0];
        memcpy(acc, first ? row : t->initial, t->itemsize);
        if (n > 0) {
            char *args[3] = {acc, row + first * t->strides[1][1], acc};
            t->fn(args, &n, steps, t->data);
        }
    }
}

static void run_range(const task_t *t, Py_ssize_t s, Py_ssize_t e) {
    if (t->reduce) {
        reduce_rows(t, s, e);
        return;
    }
    Py_ssize_t n = t->shape[t->ndim - 1];
    Py_ssize_t steps[MAXARGS];
    for (int k = 0; k < t->nargs; k++) steps[k] = t->strides[k][t->ndim - 1];
    while (s < e) {
        Py_ssize_t r = s / n, c = s % n, len = n - c;
        if (len > e - s) len = e - s;
        char *args[MAXARGS];
        for (int k = 0; k < t->nargs; k++) args[k] = t->base[k] + c * steps[k];
        for (int d = t->ndim - 2; d >= 0 && r; d--) {   /* unravel the row index over the outer dims */
            Py_ssize_t i = r % t->shape[d];
            r /= t->shape[d];
            for (int k = 0; k < t->nargs; k++) args[k] += i * t->strides[k][d];
        }
        t->fn(args, &len, steps, t->data);
        s += len;
    }
}

/* ------------------------------------------------------------------ the pool */
static int n_workers = 0;                  /* threads besides the caller */
static long spin_ns = 2000000;
static atomic_int started = 0;            /* 1: workers running; -1: none could be started; 0: not yet */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t task_mu = PTHREAD_MUTEX_INITIALIZER;    /* one task at a time; others run alone */
static pthread_mutex_t sleep_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cv = PTHREAD_COND_INITIALIZER;
static atomic_ulong generation = 0;       /* bumped per task: what spinning workers watch */
static atomic_int sleepers = 0;
/* the claim word of the current task: [sequence:40 | chunks:12 | next chunk:12]. A chunk is taken by a
 * compare-and-swap of the whole word, so a worker can only take a chunk of the task published last; the task's
 * fields are written before its word, and not again until every chunk taken from it is done. */
static atomic_ullong claim = 0;
static atomic_long done_chunks = 0;
static unsigned long long sequence = 0;
static task_t the_task;
static atomic_ulong n_parallel = 0, n_alone = 0;
static atomic_ulong parked_at = ~0UL;      /* park(): workers that have seen this generation sleep at once */
#define MAXCHUNKS 4095

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* take chunks of the current task until none is left */
static void take_chunks(void) {
    for (;;) {
        unsigned long long c = atomic_load(&claim);
        for (;;) {
            if ((c & 0xfff) >= ((c >> 12) & 0xfff)) return;
            if (atomic_compare_exchange_weak(&claim, &c, c + 1)) break;
        }
        Py_ssize_t s = (Py_ssize_t)(c & 0xfff) * the_task.chunk, e = s + the_task.chunk;
        if (e > the_task.total) e = the_task.total;
        fpmode_set(the_task.fpmode);   /* (a worker: subnormals flushed or kept as the caller's kernel runs them) */
        run_range(&the_task, s, e);
        atomic_fetch_add(&done_chunks, 1);
    }
}

static void *worker(void *arg) {
    (void)arg;
    unsigned long seen = atomic_load(&generation);
    for (;;) {
        long t0 = now_ns();
        unsigned long g;
        unsigned spins = 0;
        while ((g = atomic_load(&generation)) == seen) {
            if ((++spins & 255) == 0 || atomic_load(&parked_at) == seen) {
                long waited = now_ns() - t0;
                if (waited <= spin_ns && atomic_load(&parked_at) != seen) {
                    /* past the first 50 us, a runnable thread of this core goes first (OpenBLAS's: a worker spinning
                     * on beside its threads slowed scikit-learn's LogisticRegression 11 -> 17 ms) */
                    if (waited > 50000) sched_yield();
                    continue;
                }
                pthread_mutex_lock(&sleep_mu);
                atomic_fetch_add(&sleepers, 1);
                while ((g = atomic_load(&generation)) == seen) pthread_cond_wait(&sleep_cv, &sleep_mu);
                atomic_fetch_sub(&sleepers, 1);
                pthread_mutex_unlock(&sleep_mu);
                break;
            }
            relax();
        }
        seen = g;
        take_chunks();
    }
    return NULL;
}

/* Spinning workers go to sleep now: another thread pool is about to need the cores (an XLA executable's: a
 * worker spinning beside it slowed a 1.5 ms jitted call by ~35% on 2 cores). A few ns. */
static void park(void) {   /* (it names the generation, not a count: a park while a worker is still finishing a task,
                              * or still waking from a sleep, counts for it too) */
    if (n_workers > 0) atomic_store(&parked_at, atomic_load(&generation));
}

static void after_fork_child(void) {   /* a forked child has no workers: start them again when needed */
    started = 0;
    pthread_mutex_init(&start_mu, NULL);
    pthread_mutex_init(&task_mu, NULL);
    pthread_mutex_init(&sleep_mu, NULL);
    pthread_cond_init(&sleep_cv, NULL);
    atomic_store(&sleepers, 0);
    atomic_store(&claim, 0);
    atomic_store(&done_chunks, 0);
}

static int ensure_started(void) {
    if (started) return started > 0;
    pthread_mutex_lock(&start_mu);
    if (!started) {
        int ok = 0;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        for (int i = 0; i < n_workers; i++) {
            pthread_t th;
            if (pthread_create(&th, &attr, worker, NULL) == 0) ok++;
        }
        pthread_attr_destroy(&attr);
        started = ok > 0 ? 1 : -1;
    }
    pthread_mutex_unlock(&start_mu);
    return started > 0;
}

/* A worker's chunk later than the caller's own work by more than STALL_NS means another thread holds its core
 * (OpenBLAS's threads spin ~0.1 s after each call; on 2 cores a descheduled worker cost an op a whole time slice,
 * LDA's cold call 31 -> 68 ms): ops then run alone for BACKOFF_NS, the workers parked. */
#define STALL_NS 200000
#define BACKOFF_NS 50000000
static long alone_until = 0;                /* (read and written under task_mu) */

/* Elements from which an op waits for sleeping workers to wake: below, a wake-up (~20-50 us on a VM) costs
 * more than their share of the work saves, so the caller runs it alone and wakes them for the next op. */
#define WAKE_PAYS (1 << 19)

/* run a task: over the workers when the pool is free (not another thread's op) and some worker is awake or the
 * task is large; else on the calling thread alone, waking sleeping workers for the ops to come */
static void execute(task_t *t) {
    if (n_workers > 0 && t->nchunks > 1 && t->nchunks <= MAXCHUNKS && ensure_started() && pthread_mutex_trylock(&task_mu) == 0) {
        int asleep = atomic_load(&sleepers);
        long start = now_ns();
        int share = (asleep < n_workers || t->elements >= WAKE_PAYS) && start >= alone_until;
        if (share) {
            the_task = *t;
            the_task.fpmode = fpmode_get();
            atomic_store(&done_chunks, 0);
            sequence = (sequence + 1) & ((1ULL << 40) - 1);
            atomic_store(&claim, (sequence << 24) | ((unsigned long long)t->nchunks << 12));
        }
        atomic_fetch_add(&generation, 1);   /* (not shared: the claim word stays spent; workers just wake) */
        if (asleep > 0 && (share || (spin_ns > 0 && start >= alone_until))) {   /* (never spinning: woken for nothing) */
            pthread_mutex_lock(&sleep_mu);
            pthread_cond_broadcast(&sleep_cv);
            pthread_mutex_unlock(&sleep_mu);
        }
        if (share) {
            take_chunks();
            long t0 = now_ns(), t1;
            unsigned spins = 0;
            while (atomic_load(&done_chunks) < t->nchunks) {   /* a worker finishing its chunk */
                if ((++spins & 255) == 0 && now_ns() - t0 > 20000) sched_yield();
                else relax();
            }
            t1 = now_ns();
            if (t1 - t0 > STALL_NS + (t0 - start)) {   /* a worker's chunk came late: the cores are contended */
                alone_until = t1 + BACKOFF_NS;
                atomic_store(&parked_at, atomic_load(&generation));
            }
        } else {
            run_range(t, 0, t->total);
        }
        pthread_mutex_unlock(&task_mu);
        atomic_fetch_add(share ? &n_parallel : &n_alone, 1);
        return;
    }
    run_range(t, 0, t->total);
    atomic_fetch_add(&n_alone, 1);
}

/* ------------------------------------------------------------------ Python functions */
static PyTypeObject *ufunc_type = NULL;
static Py_ssize_t min_chunk = 16384;

/* cut t's units (elements or rows) into ~4 chunks per thread of at least `grain` units; run with the GIL released */
static void launch(task_t *t, Py_ssize_t grain) {
    if (t->total <= 0) return;
    int parts = 4 * (n_workers + 1);   /* (<= MAXCHUNKS: n_workers < 256) */
    Py_ssize_t chunk = (t->total + parts - 1) / parts;
    t->chunk = chunk < grain ? grain : chunk;
    t->nchunks = (t->total + t->chunk - 1) / t->chunk;
    Py_BEGIN_ALLOW_THREADS
    execute(t);
    Py_END_ALLOW_THREADS
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *ut;
    int threads;
    double spin_us;
    if (!PyArg_ParseTuple(args, "O!id:configure", &PyType_Type, &ut, &threads, &spin_us)) return NULL;
    if (threads < 1 || threads > 256 || spin_us < 0) {
        PyErr_SetString(PyExc_ValueError, "configure: threads must be in [1, 256], spin_us >= 0");
        return NULL;
    }
    if (started) {
        PyErr_SetString(PyExc_RuntimeError, "configure: the workers are already running");
        return NULL;
    }
    Py_INCREF(ut);
    Py_XSETREF(ufunc_type, (PyTypeObject *)ut);
    n_workers = threads - 1;
    spin_ns = (long)(spin_us * 1000.0);
    Py_RETURN_NONE;
}

static void loop_free(PyObject *cap) {
    loop_spec *L = PyCapsule_GetPointer(cap, LOOP_CAPSULE);
    if (L != NULL) {
        Py_XDECREF(L->ufunc);
        PyMem_Free(L);
    }
}

static PyObject *make(PyObject *self, PyObject *args) {
    PyObject *u, *formats;
    int index;
    if (!PyArg_ParseTuple(args, "OiO!:make", &u, &index, &PyTuple_Type, &formats)) return NULL;
    if (ufunc_type == NULL || !PyObject_TypeCheck(u, ufunc_type)) {
        PyErr_SetString(PyExc_TypeError, "make: not a numpy.ufunc (or not configured)");
        return NULL;
    }
    ufunc_head *uf = (ufunc_head *)u;
    int nargs = uf->nin + uf->nout;
    if (uf->nout != 1 || nargs > MAXARGS || nargs != uf->nargs) {
        PyErr_SetString(PyExc_ValueError, "make: only ufuncs of one output and at most 3 inputs");
        return NULL;
    }
    if (index < 0 || index >= uf->ntypes || uf->functions == NULL || uf->functions[index] == NULL) {
        PyErr_SetString(PyExc_ValueError, "make: no such loop");
        return NULL;
    }
    if (PyTuple_GET_SIZE(formats) != nargs) {
        PyErr_SetString(PyExc_ValueError, "make: one format per operand");
        return NULL;
    }
    loop_spec *L = PyMem_Calloc(1, sizeof(loop_spec));
    if (L == NULL) return PyErr_NoMemory();
    for (int k = 0; k < nargs; k++) {
        const char *f = PyUnicode_AsUTF8(PyTuple_GET_ITEM(formats, k));
        if (f == NULL || strlen(f) >= sizeof(L->formats[k])) {
            PyMem_Free(L);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "make: bad format");
            return NULL;
        }
        strcpy(L->formats[k], f);
    }
    L->fn = uf->functions[index];
    L->data = uf->data == NULL ? NULL : uf->data[index];
    L->nargs = nargs;
    Py_INCREF(u);
    L->ufunc = u;
    PyObject *cap = PyCapsule_New(L, LOOP_CAPSULE, loop_free);
    if (cap == NULL) { Py_DECREF(u); PyMem_Free(L); }
    return cap;
}

/* a strided copy of elements of `data` bytes (a loop of one input): what a layout change (a transpose made
 * contiguous) runs over the cores */
static void copy_loop(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data) {
    Py_ssize_t n = dims[0], si = steps[0], so = steps[1], size = (Py_ssize_t)(Py_intptr_t)data;
    char *in = args[0], *out = args[1];
    switch (size) {
    case 8: for (Py_ssize_t i = 0; i < n; i++, in += si, out += so) memcpy(out, in, 8); break;
    case 4: for (Py_ssize_t i = 0; i < n; i++, in += si, out += so) memcpy(out, in, 4); break;
    case 16: for (Py_ssize_t i = 0; i < n; i++, in += si, out += so) memcpy(out, in, 16); break;
    case 2: for (Py_ssize_t i = 0; i < n; i++, in += si, out += so) memcpy(out, in, 2); break;
    case 1: for (Py_ssize_t i = 0; i < n; i++, in += si, out += so) *out = *in; break;
    default: for (Py_ssize_t i = 0; i < n; i++, in += si, out += so) memcpy(out, in, (size_t)size);
    }
}

/* copier(format, itemsize) -> a loop copying elements of that buffer format (run(copier, out, x): out = x) */
static PyObject *copier(PyObject *self, PyObject *args) {
    const char *f;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "sn:copier", &f, &size)) return NULL;
    if (size < 1 || size > 64 || strlen(f) >= 8) {
        PyErr_SetString(PyExc_ValueError, "copier: bad format or item size");
        return NULL;
    }
    loop_spec *L = PyMem_Calloc(1, sizeof(loop_spec));
    if (L == NULL) return PyErr_NoMemory();
    L->fn = copy_loop;
    L->data = (void *)(Py_intptr_t)size;
    L->nargs = 2;
    strcpy(L->formats[0], f);
    strcpy(L->formats[1], f);
    PyObject *cap = PyCapsule_New(L, LOOP_CAPSULE, loop_free);
    if (cap == NULL) PyMem_Free(L);
    return cap;
}

static const char *fmt_of(const Py_buffer *b) {
    const char *f = b->format ? b->format : "B";
    if (f[0] == '=' || f[0] == '@' || f[0] == '<') f++;   /* native order only is ever exported here */
    return f;
}

/* NumPy hands its loops aligned data only (it buffers other data first) */
static int aligned(const Py_buffer *b) {
    Py_ssize_t a = b->itemsize;
    if (b->format && b->format[0] == 'Z') a /= 2;   /* complex: aligned as its parts */
    if (a <= 1) return 1;
    if ((Py_uintptr_t)b->buf % (Py_uintptr_t)a) return 0;
    for (int d = 0; d < b->ndim; d++)
        if (b->strides && b->strides[d] % a) return 0;
    return 1;
}

static PyObject *run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError, "run(loop, out, *ins)");
        return NULL;
    }
    loop_spec *L = PyCapsule_GetPointer(args[0], LOOP_CAPSULE);
    if (L == NULL) return NULL;
    if (nargs - 1 != L->nargs) {
        PyErr_Format(PyExc_TypeError, "run: the loop takes %d operands", L->nargs);
        return NULL;
    }
    Py_buffer views[MAXARGS];
    int got = 0;
    PyObject *result = NULL;
    /* the output first (args[1]), then the inputs; loop operand order: inputs, then the output */
    for (int k = 0; k < L->nargs; k++) {
        PyObject *o = args[k == 0 ? 1 : k + 1];
        int flags = PyBUF_STRIDES | PyBUF_FORMAT | (k == 0 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(o, &views[k], flags) < 0) goto done;
        got++;
    }
    task_t t;
    memset(&t, 0, sizeof(t));
    t.fn = L->fn;
    t.data = L->data;
    t.nargs = L->nargs;
    int nd = views[0].ndim;
    if (nd > MAXDIM) { PyErr_SetString(PyExc_ValueError, "run: too many dimensions"); goto done; }
    Py_ssize_t total = 1;
    for (int d = 0; d < nd; d++) total *= views[0].shape[d];
    for (int k = 0; k < L->nargs; k++) {
        const Py_buffer *b = &views[k];
        int op = k == 0 ? L->nargs - 1 : k - 1;   /* this view's place among the loop's operands */
        if (strcmp(fmt_of(b), L->formats[op]) != 0 || !aligned(b)) {   /* not this loop's: declined */
            result = Py_False;
            Py_INCREF(result);
            goto done;
        }
        if (b->ndim > nd) { PyErr_SetString(PyExc_ValueError, "run: an input has more dims than out"); goto done; }
        int lead = nd - b->ndim;
        for (int d = 0; d < nd; d++) {
            Py_ssize_t st;
            if (d < lead) st = 0;
            else {
                Py_ssize_t sz = b->shape[d - lead];
                st = b->strides ? b->strides[d - lead] : 0;
                if (sz == 1 && views[0].shape[d] != 1) st = 0;
                else if (sz != views[0].shape[d]) {
                    PyErr_SetString(PyExc_ValueError, "run: an input does not broadcast to out's shape");
                    goto done;
                }
            }
            t.strides[op][d] = st;
        }
        t.base[op] = b->buf;
    }
    /* merge dimensions (size-1 dims dropped; d, d+1 merged where every operand steps through them as one) */
    int m = 0;
    for (int d = 0; d < nd; d++) {
        Py_ssize_t sz = views[0].shape[d];
        if (sz == 1) continue;
        if (m > 0) {
            int merge = 1;
            for (int k = 0; k < L->nargs; k++)
                if (t.strides[k][m - 1] != t.strides[k][d] * sz) { merge = 0; break; }
            if (merge) {
                t.shape[m - 1] *= sz;
                for (int k = 0; k < L->nargs; k++) t.strides[k][m - 1] = t.strides[k][d];
                continue;
            }
        }
        t.shape[m] = sz;
        for (int k = 0; k < L->nargs; k++) t.strides[k][m] = t.strides[k][d];
        m++;
    }
    if (m == 0) {   /* 0-d (or all dims 1): one element */
        t.shape[0] = 1;
        for (int k = 0; k < L->nargs; k++) t.strides[k][0] = 0;
        m = 1;
    }
    t.ndim = m;
    t.total = total;
    t.elements = total;
    launch(&t, min_chunk);
    result = Py_True;
    Py_INCREF(result);
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&views[k]);
    return result;
}

/* reduce(loop, out, x): out[r] = the loop's reduction of row x[r, :] (x 2-d, every row non-empty; out 1-d of
 * x's row count): True; False (nothing written) where the formats are not the loop's or data is unaligned */
static PyObject *reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 && nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "reduce(loop, out, x[, initial])");
        return NULL;
    }
    loop_spec *L = PyCapsule_GetPointer(args[0], LOOP_CAPSULE);
    if (L == NULL) return NULL;
    if (L->nargs != 3 || strcmp(L->formats[0], L->formats[2]) || strcmp(L->formats[1], L->formats[2])) {
        PyErr_SetString(PyExc_TypeError, "reduce: the loop must be binary, of one type throughout");
        return NULL;
    }
    Py_buffer vo, vx;
    if (PyObject_GetBuffer(args[1], &vo, PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[2], &vx, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vo);
        return NULL;
    }
    PyObject *result = NULL;
    if (vo.ndim != 1 || vx.ndim != 2 || vo.shape[0] != vx.shape[0] || vx.shape[1] < 1) {
        PyErr_SetString(PyExc_ValueError, "reduce: x must be 2-d with non-empty rows, out 1-d of its row count");
        goto done;
    }
    if (strcmp(fmt_of(&vo), L->formats[2]) || strcmp(fmt_of(&vx), L->formats[2]) || !aligned(&vo) ||
        !aligned(&vx)) {
        result = Py_False;
        Py_INCREF(result);
        goto done;
    }
    task_t t;
    memset(&t, 0, sizeof(t));
    t.fn = L->fn;
    t.data = L->data;
    t.reduce = 1;
    t.itemsize = vx.itemsize;
    if (nargs == 4 && args[3] != Py_None) {
        if (!PyBytes_Check(args[3]) || PyBytes_GET_SIZE(args[3]) != vx.itemsize) {
            PyErr_SetString(PyExc_TypeError, "reduce: initial must be the bytes of one element");
            goto done;
        }
        t.initial = PyBytes_AS_STRING(args[3]);
    }
    t.nargs = 2;
    t.ndim = 2;
    t.shape[0] = vx.shape[0];
    t.shape[1] = vx.shape[1];
    t.base[0] = vo.buf;
    t.strides[0][0] = vo.strides[0];
    t.base[1] = vx.buf;
    t.strides[1][0] = vx.strides[0];
    t.strides[1][1] = vx.strides[1];
    t.total = vx.shape[0];
    t.elements = vx.shape[0] * vx.shape[1];
    launch(&t, (min_chunk + vx.shape[1] - 1) / vx.shape[1]);   /* (rows of at least min_chunk elements) */
    result = Py_True;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vo);
    PyBuffer_Release(&vx);
    return result;
}

static PyObject *py_park(PyObject *self, PyObject *unused) {
    park();
    Py_RETURN_NONE;
}

static PyObject *stats(PyObject *self, PyObject *unused) {
    return Py_BuildValue("(kki)", (unsigned long)atomic_load(&n_parallel), (unsigned long)atomic_load(&n_alone),
                         (int)atomic_load(&sleepers));
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(ufunc_type, threads, spin_us)"},
    {"make", make, METH_VARARGS, "make(ufunc, index, formats) -> a loop of the ufunc's table"},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "run(loop, out, *ins): out = ufunc(*ins)"},
    {"copier", copier, METH_VARARGS, "copier(format, itemsize) -> a loop copying such elements"},
    {"reduce", (PyCFunction)(void (*)(void))reduce, METH_FASTCALL, "reduce(loop, out, x): out = rows of x reduced"},
    {"park", py_park, METH_NOARGS, "park(): spinning workers sleep now (another pool needs the cores)"},
    {"stats", stats, METH_NOARGS, "(runs over the workers, runs on the caller alone)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_parallel_loops", NULL, -1, methods};

PyMODINIT_FUNC PyInit__parallel_loops(void) {
    pthread_atfork(NULL, NULL, after_fork_child);
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    /* park() for other C code (the jit callbacks): a capsule holding the function */
    PyObject *cap = PyCapsule_New((void *)park, "xla._parallel_loops.park", NULL);
    if (cap == NULL || PyModule_AddObject(m, "park_capsule", cap) < 0) {
        Py_XDECREF(cap);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
