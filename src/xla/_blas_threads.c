/* One OpenBLAS thread while a LAPACK kernel runs, eager and jitted alike (see xla/host_blas.py, which finds the
 * libraries and says why). The hold count lives here, in C, because jitted kernels run on XLA's threads without
 * the GIL: a jitted LAPACK custom call on a small matrix calls a trampoline that holds around jaxlib's handler.
 *
 *   libraries([(set_address, get_address), ...])   each loaded OpenBLAS's thread-count setter and getter
 *   hold() / release()   the first hold saves every library's count and sets it to one; the last release puts
 *                        them back (overlapping holds in any threads nest)
 *   held() -> int        holds now
 *   one_thread(capsule) -> capsule   an XLA FFI handler (jaxlib's "xla._CUSTOM_CALL_TARGET" capsule) that runs
 *                        the given one inside hold()/release(); every call of the handler (each FFI stage) is
 *                        forwarded unchanged
 *   after_fork()         in a child: no holds; if a parent thread held one at the fork, the counts stay one until
 *                        the child's first kernel ends (a fork waits for a count change in progress: fork_prepare)
 * Required (pyproject.toml), as jitted and eager factorizations share it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>

#define MAX_LIBS 8
#define SLOTS 100

typedef void (*set_fn)(int);
typedef int (*get_fn)(void);
typedef void *(*handler_fn)(void *);   /* XLA_FFI_Error *(XLA_FFI_CallFrame *) */

static set_fn setters[MAX_LIBS];
static get_fn getters[MAX_LIBS];
static int saved[MAX_LIBS];
static int nlibs, holds;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int pending;   /* in a child forked during a hold: the counts are still one, `saved` holds the originals */

static void hold_(void) {
    pthread_mutex_lock(&lock);
    if (holds++ == 0 && !pending)
        for (int i = 0; i < nlibs; i++) {
            saved[i] = getters[i]();
            if (saved[i] != 1) setters[i](1);
        }
    pthread_mutex_unlock(&lock);
}

static void release_(void) {
    pthread_mutex_lock(&lock);
    if (--holds == 0) {
        for (int i = 0; i < nlibs; i++)
            if (saved[i] != 1) setters[i](saved[i]);
        pending = 0;
    }
    pthread_mutex_unlock(&lock);
}

/* trampolines: slot k forwards to inner[k] inside a hold */
static handler_fn inner[SLOTS];
static int used;
#define T(d, j) static void *t##d##_##j(void *frame) { \
    hold_(); void *e = inner[10 * d + j](frame); release_(); return e; }
#define T10(d) T(d, 0) T(d, 1) T(d, 2) T(d, 3) T(d, 4) T(d, 5) T(d, 6) T(d, 7) T(d, 8) T(d, 9)
T10(0) T10(1) T10(2) T10(3) T10(4) T10(5) T10(6) T10(7) T10(8) T10(9)
#define A10(d) t##d##_0, t##d##_1, t##d##_2, t##d##_3, t##d##_4, t##d##_5, t##d##_6, t##d##_7, t##d##_8, t##d##_9
static handler_fn trampolines[SLOTS] = {A10(0), A10(1), A10(2), A10(3), A10(4), A10(5), A10(6), A10(7), A10(8),
                                        A10(9)};

static const char CAPSULE[] = "xla._CUSTOM_CALL_TARGET";

/* A fork waits for a hold or release in progress: another thread's setter call re-starting OpenBLAS's threads
 * after OpenBLAS's own fork handler stopped them left the child joining threads it does not have (at exit), or
 * waiting on OpenBLAS's lock (at its next count change). Registered once the libraries are loaded, after their
 * handlers, so that this prepare handler runs before theirs. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { pthread_mutex_init(&lock, NULL); }
static int fork_handlers;

static PyObject *libraries(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "libraries: expected a sequence of (set, get) addresses");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_LIBS) n = MAX_LIBS;
    set_fn s[MAX_LIBS];
    get_fn g[MAX_LIBS];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "libraries: expected (set, get) address pairs");
            return NULL;
        }
        void *a = PyLong_AsVoidPtr(PyTuple_GET_ITEM(pair, 0)), *b = PyLong_AsVoidPtr(PyTuple_GET_ITEM(pair, 1));
        if (PyErr_Occurred()) { Py_DECREF(seq); return NULL; }
        s[i] = (set_fn)a;
        g[i] = (get_fn)b;
    }
    Py_DECREF(seq);
    pthread_mutex_lock(&lock);
    int ok = holds == 0;
    if (ok) {
        for (Py_ssize_t i = 0; i < n; i++) { setters[i] = s[i]; getters[i] = g[i]; }
        nlibs = (int)n;
    }
    pthread_mutex_unlock(&lock);
    if (ok && !fork_handlers) {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        fork_handlers = 1;
    }
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "libraries: cannot change the libraries while a kernel holds them");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *hold(PyObject *self, PyObject *unused) { hold_(); Py_RETURN_NONE; }
static PyObject *release(PyObject *self, PyObject *unused) { release_(); Py_RETURN_NONE; }

static PyObject *held(PyObject *self, PyObject *unused) {
    pthread_mutex_lock(&lock);
    int h = holds;
    pthread_mutex_unlock(&lock);
    return PyLong_FromLong(h);
}

static PyObject *one_thread(PyObject *self, PyObject *capsule) {
    handler_fn f = (handler_fn)PyCapsule_GetPointer(capsule, CAPSULE);
    if (!f) return NULL;
    if (used == SLOTS) {
        PyErr_SetString(PyExc_RuntimeError, "one_thread: every trampoline is in use");
        return NULL;
    }
    inner[used] = f;
    return PyCapsule_New((void *)trampolines[used++], CAPSULE, NULL);
}

static PyObject *after_fork(PyObject *self, PyObject *unused) {
    /* No OpenBLAS call here: a lock of OpenBLAS's that another parent thread held at the fork (its memory
     * allocator's, inside a kernel) stays held in the child, and a count change there waited on it forever. */
    if (holds) pending = 1;
    holds = 0;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"libraries", libraries, METH_O, "Each loaded OpenBLAS's (set, get) thread-count function addresses."},
    {"hold", hold, METH_NOARGS, "Hold one thread: the first hold sets every library to one thread."},
    {"release", release, METH_NOARGS, "End a hold: the last one puts every library's count back."},
    {"held", held, METH_NOARGS, "The number of holds now."},
    {"one_thread", one_thread, METH_O, "An XLA FFI handler capsule that runs the given one inside a hold."},
    {"after_fork", after_fork, METH_NOARGS, "In a child: no holds (counts held at the fork come back later)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blas_threads", NULL, -1, methods};

PyMODINIT_FUNC PyInit__blas_threads(void) { return PyModule_Create(&module); }
