/* Host kernels run in XLA's CPU floating-point mode: subnormals flushed (see xla/host.py, "Subnormals").
 * XLA's CPU runtime runs every executable with FTZ and DAZ set (tsl::port::ScopedFlushDenormal), and no option
 * keeps subnormals there; so eager kernels set the same bits of the calling thread's control register around
 * each run and restore them after, and NumPy code outside a kernel keeps IEEE arithmetic.
 *
 *   supported                 whether this machine's mode can be set (x86-64: MXCSR FTZ+DAZ; aarch64: FPCR FZ)
 *   FLUSH                     the control bits that flush (0 where unsupported)
 *   get() -> bits             the flush bits set in this thread now (0 or FLUSH)
 *   set(bits) -> old bits     set them (0 or FLUSH), the rest of the register kept
 *   configure(var)            NumPy's floating-point error-state context variable (or None)
 *   err_set(state) -> token   var set to `state` and the flush bits set, in one call (a kernel's entry)
 *   err_reset(token)          both put back as they were (the kernel's exit)
 *
 * err_set/err_reset are host.err_set/err_reset: every eager kernel run is bracketed by them, so they are a few
 * tens of ns (a register read, a write only when the bits change). Optional (pyproject.toml): where it is not
 * built, host.py warns once and kernels keep subnormals. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
/* the calling thread's flush bits: x86-64 MXCSR's FTZ (0x8000: a subnormal result is written as zero) and DAZ
 * (0x40: a subnormal operand is read as zero); aarch64 FPCR's FZ (bit 24: both); elsewhere none (FPMODE_FLUSH 0) */
#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define FPMODE_FLUSH 0x8040u
static inline unsigned fpmode_word(void) { return _mm_getcsr(); }
static inline void fpmode_write(unsigned w) { _mm_setcsr(w); }
#elif defined(__aarch64__)
#define FPMODE_FLUSH (1u << 24)
static inline unsigned fpmode_word(void) {
    unsigned long long w;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(w));
    return (unsigned)w;
}
static inline void fpmode_write(unsigned w) {
    unsigned long long v = w;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(v));
}
#else
#define FPMODE_FLUSH 0u
static inline unsigned fpmode_word(void) { return 0; }
static inline void fpmode_write(unsigned w) { (void)w; }
#endif

/* the flush bits now set in this thread (0 or FPMODE_FLUSH) */
static inline unsigned fpmode_get(void) { return fpmode_word() & FPMODE_FLUSH; }

/* set this thread's flush bits to `bits` (0 or FPMODE_FLUSH), the rest of the register (rounding, exception
 * masks and flags) kept; a no-op when they are already so (a register write costs more than a read) */
static inline void fpmode_set(unsigned bits) {
    unsigned w = fpmode_word();
    if ((w & FPMODE_FLUSH) != bits) fpmode_write((w & ~FPMODE_FLUSH) | bits);
}


static PyObject *errvar = NULL;   /* NumPy's error-state ContextVar, or NULL: err_set sets the mode alone */
static PyObject *small_bits[2] = {NULL, NULL};   /* the old bits as Python ints: 0, FLUSH */

static PyObject *get(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLong(fpmode_get());
}

static int parse_bits(PyObject *arg, unsigned *bits) {
    unsigned long b = PyLong_AsUnsignedLong(arg);
    if (b == (unsigned long)-1 && PyErr_Occurred()) return -1;
    if (b != 0 && b != FPMODE_FLUSH) {
        PyErr_Format(PyExc_ValueError, "set: bits must be 0 or FLUSH (%u), got %lu", FPMODE_FLUSH, b);
        return -1;
    }
    *bits = (unsigned)b;
    return 0;
}

static PyObject *set(PyObject *self, PyObject *arg) {
    unsigned bits, old = fpmode_get();
    if (parse_bits(arg, &bits) < 0) return NULL;
    fpmode_set(bits);
    return PyLong_FromUnsignedLong(old);
}

static PyObject *configure(PyObject *self, PyObject *var) {
    if (var != Py_None && !PyContextVar_CheckExact(var)) {
        PyErr_SetString(PyExc_TypeError, "configure: expected a ContextVar or None");
        return NULL;
    }
    Py_XDECREF(errvar);
    errvar = NULL;
    if (var != Py_None) {
        Py_INCREF(var);
        errvar = var;
    }
    Py_RETURN_NONE;
}

/* token: (the context variable's token or None, the old bits) */
static PyObject *err_set(PyObject *self, PyObject *state) {
    PyObject *tok;
    if (errvar != NULL) {
        tok = PyContextVar_Set(errvar, state);
        if (tok == NULL) return NULL;
    } else {
        Py_INCREF(Py_None);
        tok = Py_None;
    }
    PyObject *out = PyTuple_New(2);
    if (out == NULL) {
        if (errvar != NULL) PyContextVar_Reset(errvar, tok);
        Py_DECREF(tok);
        return NULL;
    }
    unsigned w = fpmode_word(), old = w & FPMODE_FLUSH;
    if (old != FPMODE_FLUSH) fpmode_write(w | FPMODE_FLUSH);
    PyObject *ob = small_bits[old != 0];
    Py_INCREF(ob);
    PyTuple_SET_ITEM(out, 0, tok);
    PyTuple_SET_ITEM(out, 1, ob);
    return out;
}

static PyObject *err_reset(PyObject *self, PyObject *token) {
    if (!PyTuple_CheckExact(token) || PyTuple_GET_SIZE(token) != 2) {
        PyErr_SetString(PyExc_TypeError, "err_reset: expected a token of err_set");
        return NULL;
    }
    PyObject *tok = PyTuple_GET_ITEM(token, 0);
    fpmode_set(PyTuple_GET_ITEM(token, 1) == small_bits[0] ? 0 : FPMODE_FLUSH);
    if (tok != Py_None) {
        if (errvar == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "err_reset: a context token, and no context variable configured");
            return NULL;
        }
        if (PyContextVar_Reset(errvar, tok) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"get", get, METH_NOARGS, "get() -> the flush bits set in this thread now (0 or FLUSH)"},
    {"set", set, METH_O, "set(bits) -> the old bits: this thread's flush bits set to 0 or FLUSH"},
    {"configure", configure, METH_O, "configure(var): NumPy's floating-point error-state ContextVar (or None)"},
    {"err_set", err_set, METH_O, "err_set(state) -> token: the error state set to `state`, subnormals flushed"},
    {"err_reset", err_reset, METH_O, "err_reset(token): the error state and the flush bits put back"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fpmode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fpmode(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    small_bits[0] = PyLong_FromUnsignedLong(0);
    small_bits[1] = PyLong_FromUnsignedLong(FPMODE_FLUSH);
    if (small_bits[0] == NULL || small_bits[1] == NULL
            || PyModule_AddObject(m, "supported", PyBool_FromLong(FPMODE_FLUSH != 0)) < 0
            || PyModule_AddIntConstant(m, "FLUSH", (long)FPMODE_FLUSH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
