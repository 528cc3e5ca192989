/* Host kernels run in XLA's CPU floating-point mode: subnormals flushed (see xla/host.py, "Subnormals").
 * XLA's CPU runtime runs every executable with FTZ and DAZ set (tsl::port::ScopedFlushDenormal), and no option
 * keeps subnormals there; so eager kernels set the same bits of the calling thread's control register around
 * each run and restore them after, and NumPy code outside a kernel keeps IEEE arithmetic.
 *
 *   supported                 whether this machine's mode can be set (x86-64: MXCSR FTZ+DAZ; aarch64: FPCR FZ)
 *   FLUSH                     the control bits that flush (0 where unsupported)
 *   get() -> bits             the flush bits set in this thread now (0 or FLUSH)
 *   set(bits) -> old bits     set them (0 or FLUSH), the rest of the register kept
 *   configure(var, quiet, HostValue, ndarray)   NumPy's error-state ContextVar (or None), the state kernels run
 *                             in, the classes HostImpl makes and reads
 *   quiet(fn, *args, **kw)    fn(*args, **kw) as a kernel runs: var set to `quiet`, the flush bits set, and
 *                             both put back after (host.quiet: kernels run through it or HostImpl, which does
 *                             the same: a register read, a write only when the bits change)
 *   HostImpl                  a primitive's eager impl on host-held values (below)
 *   element(v, key[, value])  x[i, j] of a host-held value, one element, read or written (below)
 *   sole_holder(vals, family) whether host values' memory may take a write (below)
 *   family_element(vals, i, key, value)   a view family's one-element write (below)
 *   kept() -> (blocks, bytes) what the kernels' memory handler keeps now (below; glibc builds)
 * Required (pyproject.toml): without it eager and jitted results would differ on subnormals. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>
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


/* ---------------------------------------------------------------- the kernels' memory handler
 * glibc returns a freed block of a few hundred KiB or more to the OS (munmap, or a trim of the heap's top), so the
 * next kernel output of that size page-faults in again, page by page: about half the time of a medium eager call
 * (scipy's skew on 2020x70: ~3.9 -> ~1.5 ms). So kernels allocate through this NumPy memory handler, set around
 * each run as the error state is -- by HostImpl only where an operand or the result has KEEP_MIN bytes or more (the
 * handler's two context-variable switches cost ~0.35 us, a third of a small op; a run below that makes a block of
 * that size only as a rare temporary, which then takes NumPy's way) -- so only the arrays our kernels make use it:
 * user NumPy code keeps NumPy's. It is NumPy's handler (at import) but for one thing: a freed block of KEEP_MIN
 * bytes or more is kept, at most KEEP_N
 * blocks and KEEP_MAX bytes (glibc's own ceiling for freed memory it keeps), the slots taken in turn (the oldest
 * kept block goes back to NumPy's handler to make room), and handed out again for a request it fits with little
 * waste. */
static PyObject *handler = NULL;  /* a capsule of k_handler, or NULL: kernels keep NumPy's handler */
#define KEEP_MIN ((size_t)64 << 10)
#if defined(__GLIBC__)   /* (elsewhere kernels keep NumPy's handler) */
#include <malloc.h>
#include <pthread.h>
#define KEEP_N 32
#define KEEP_MAX ((size_t)64 << 20)
static struct { void *p; size_t n; } kept[KEEP_N];
static size_t kept_bytes, next_slot;
static char kept_lock;   /* a spin lock, held for a few loads and stores (never across a call) */
static PyDataMemAllocator base;   /* NumPy's default handler's */
static void lock(void) { while (__atomic_test_and_set(&kept_lock, __ATOMIC_ACQUIRE)) ; }
static void unlock(void) { __atomic_clear(&kept_lock, __ATOMIC_RELEASE); }
static void unlock_in_child(void) { kept_lock = 0; }   /* (a fork while another thread held it) */

static void *k_malloc(void *ctx, size_t n) {   /* a kept block of n to n + n/8 + KEEP_MIN bytes, or NumPy's */
    void *p = NULL;
    if (n >= KEEP_MIN) {
        lock();
        for (size_t j = 1, i; j <= KEEP_N && p == NULL; j++)   /* (the latest kept first: its memory is the warmest) */
            if (kept[i = (next_slot + KEEP_N - j) % KEEP_N].p != NULL && kept[i].n >= n
                    && kept[i].n - n <= n / 8 + KEEP_MIN) {
                p = kept[i].p; kept_bytes -= kept[i].n; kept[i].p = NULL;
            }
        unlock();
    }
    return p != NULL ? p : base.malloc(base.ctx, n);
}
static void *k_calloc(void *ctx, size_t k, size_t m) { return base.calloc(base.ctx, k, m); }   /* (no kept block) */
static void *k_realloc(void *ctx, void *p, size_t n) { return base.realloc(base.ctx, p, n); }
static void k_free(void *ctx, void *p, size_t size) {   /* p kept in the next slot, or back to NumPy's */
    size_t n = p == NULL ? 0 : malloc_usable_size(p);
    void *out = p;
    if (n >= KEEP_MIN && n <= KEEP_MAX) {
        lock();
        size_t i = next_slot, left = kept_bytes - (kept[i].p == NULL ? 0 : kept[i].n);
        next_slot = (i + 1) % KEEP_N;
        if (left + n <= KEEP_MAX) {
            out = kept[i].p; size = kept[i].n;
            kept[i].p = p; kept[i].n = n; kept_bytes = left + n;
        }
        unlock();
    }
    if (out != NULL) base.free(base.ctx, out, size);
}
static PyDataMem_Handler k_handler = {"array_namespace_kernels", 1, {NULL, k_malloc, k_calloc, k_realloc, k_free}};

static PyObject *kept_info(PyObject *self, PyObject *unused) {
    lock();
    size_t blocks = 0, bytes = kept_bytes;
    for (int i = 0; i < KEEP_N; i++) blocks += kept[i].p != NULL;
    unlock();
    return Py_BuildValue("nn", (Py_ssize_t)blocks, (Py_ssize_t)bytes);
}
#endif

static PyObject *errvar = NULL;   /* NumPy's error-state ContextVar, or NULL: quiet sets the mode alone */

static PyObject *get(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLong(fpmode_get());
}

static PyObject *set(PyObject *self, PyObject *arg) {
    unsigned long b = PyLong_AsUnsignedLong(arg), old = fpmode_get();
    if (b == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (b != 0 && b != FPMODE_FLUSH)
        return PyErr_Format(PyExc_ValueError, "set: bits must be 0 or FLUSH (%u), got %lu", FPMODE_FLUSH, b);
    fpmode_set((unsigned)b);
    return PyLong_FromUnsignedLong(old);
}

static PyObject *quiet = NULL, *ndarray = NULL, *str_is_deleted = NULL;
static PyTypeObject *host_type = NULL;   /* xla.host.HostValue */
static Py_ssize_t off_np = -1, off_aval = -1, off_buf = -1, off_donor = -1;
#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static Py_ssize_t slot_offset(PyTypeObject *t, const char *name) {
    PyObject *d = PyDict_GetItemString(t->tp_dict, name);   /* borrowed */
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)
            || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", t->tp_name, name);
        return -1;
    }
    return ((PyMemberDescrObject *)d)->d_member->offset;
}

/* configure(var, quiet, HostValue, ndarray): NumPy's error-state ContextVar (or None; PyContextVar_Set checks
 * it) and the state kernels run in, the class of host-held values and NumPy's array class (HostImpl's fast path) */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *var, *q, *ht, *nd;
    if (!PyArg_ParseTuple(args, "OOO!O!:configure", &var, &q, &PyType_Type, &ht, &PyType_Type, &nd)) return NULL;
    Py_ssize_t o[4];
    const char *names[4] = {"np", "aval", "_buf", "donor"};
    for (int i = 0; i < 4; i++)
        if ((o[i] = slot_offset((PyTypeObject *)ht, names[i])) < 0) return NULL;
    off_np = o[0]; off_aval = o[1]; off_buf = o[2]; off_donor = o[3];
    Py_XSETREF(errvar, var == Py_None ? NULL : Py_NewRef(var));
    Py_XSETREF(quiet, Py_NewRef(q));
    Py_XSETREF(host_type, (PyTypeObject *)Py_NewRef(ht));
    Py_XSETREF(ndarray, Py_NewRef(nd));
    Py_RETURN_NONE;
}

/* fn(*args, **kw) as a kernel runs: NumPy's error state `quiet` (warnings silenced), subnormals flushed, and where
 * `keep` the kernels' memory handler (a run that makes or frees no block it keeps need not pay its two context-variable
 * switches, ~0.35 us); all put back after, as they were (a nested run keeps the outer one's) */
static PyObject *quiet_vcall(PyObject *fn, PyObject *const *args, size_t nargsf, PyObject *kw, int keep) {
    PyObject *tok = NULL, *oldh = NULL, *out = NULL, *et, *ev, *etb;
    if (errvar != NULL && (tok = PyContextVar_Set(errvar, quiet)) == NULL) return NULL;
    if (!keep || handler == NULL || (oldh = PyDataMem_SetHandler(handler)) != NULL) {
        unsigned old = fpmode_get();
        fpmode_set(FPMODE_FLUSH);
        out = PyObject_Vectorcall(fn, args, nargsf, kw);
        fpmode_set(old);
    }
    PyErr_Fetch(&et, &ev, &etb);   /* (the resets run with no exception pending) */
    int failed = 0;
    if (oldh != NULL) {
        PyObject *h = PyDataMem_SetHandler(oldh);
        failed = h == NULL;
        Py_XDECREF(h); Py_DECREF(oldh);
    }
    if (tok != NULL) {
        failed |= PyContextVar_Reset(errvar, tok) < 0;
        Py_DECREF(tok);
    }
    if (et != NULL) PyErr_Restore(et, ev, etb);
    else if (failed) Py_CLEAR(out);
    return out;
}

static PyObject *quiet_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    if (nargs < 1) return PyErr_Format(PyExc_TypeError, "quiet(fn, *args, **kwargs): fn missing");
    return quiet_vcall(args[0], args + 1, nargs - 1, kw, 1);
}

/* ---------------------------------------------------------------- HostImpl
 * A primitive's eager impl on host-held values (runtime._make_host_impl), so that the common eager call -- every
 * operand a HostValue without a device buffer or with a live one (a jit call's: the value's NumPy array still holds
 * it; a donated one is not live), a signature seen before, one ndarray result of the expected dtype
 * and shape -- is one C call: the signature recognised by its operands' aval objects (shared per signature) and
 * params equality in a small table, the kernel run in the quiet error state with subnormals flushed, and its
 * result boxed as a HostValue. Every other case runs the Python parts it is made with:
 *   HostImpl(impl, lookup, xla, box)   impl(*args, **params): the whole general path
 *     lookup(*args, **params) -> (out aval, fn) for host-held operands, stored here; a 3-tuple (not stored) or None
 *         (kernels off: impl runs);  xla(*args, **params): the XLA executable (fn gave NotImplemented);
 *     box(out, aval) -> HostValue: any other result (a NumPy scalar, another dtype object). */
#define NENT 256   /* table entries (a power of 2): an entry's slot is a hash of its operands' aval objects */
#define MAXN 3

typedef struct {
    Py_ssize_t n;                              /* 0: empty */
    PyObject *avals[MAXN], *names, *values;    /* the key: aval objects, params' names and values (tuples) */
    PyObject *aval, *fn;                       /* the result's aval and the kernel's form */
} Entry;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *impl, *lookup, *xla, *box;
    Entry table[NENT];
} HostImpl;

static void entry_clear(Entry *e) {
    for (Py_ssize_t i = 0; i < e->n; i++) Py_CLEAR(e->avals[i]);
    e->n = 0;
    Py_CLEAR(e->names); Py_CLEAR(e->values); Py_CLEAR(e->aval); Py_CLEAR(e->fn);
}

static size_t slot_of(PyObject *const *avals, Py_ssize_t n) {
    size_t h = 0;
    for (Py_ssize_t i = 0; i < n; i++) h = h * 1000003u ^ ((size_t)avals[i] >> 4);
    return (h ^ (h >> 11)) & (NENT - 1);
}

/* whether params (names, values at args[n:]) equal the entry's */
static int same_params(Entry *e, PyObject *const *vals, PyObject *kw) {
    Py_ssize_t k = kw == NULL ? 0 : PyTuple_GET_SIZE(kw);
    if (k != (e->names == NULL ? 0 : PyTuple_GET_SIZE(e->names))) return 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *a = PyTuple_GET_ITEM(kw, i), *b = PyTuple_GET_ITEM(e->names, i);
        if (a != b && PyUnicode_Compare(a, b) != 0) return 0;
        int eq = PyObject_RichCompareBool(vals[i], PyTuple_GET_ITEM(e->values, i), Py_EQ);
        if (eq <= 0) {   /* (a value that does not compare, an array: not this entry) */
            if (eq < 0) PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* the entry for operands of `avals`: the table's, else lookup's (stored); NULL with no error: run impl */
static Entry *find(HostImpl *self, PyObject *const *args, Py_ssize_t n, PyObject *kw, PyObject **avals) {
    Entry *e = &self->table[slot_of(avals, n)];
    if (e->n == n) {
        Py_ssize_t i = 0;
        while (i < n && e->avals[i] == avals[i]) i++;
        if (i == n && same_params(e, args + n, kw)) return e;
    }
    PyObject *ent = PyObject_Vectorcall(self->lookup, args, n, kw);
    if (ent == NULL) return NULL;
    if (!PyTuple_CheckExact(ent) || PyTuple_GET_SIZE(ent) != 2) { Py_DECREF(ent); return NULL; }
    Entry old = *e;   /* (released after the new entry is in place: a destructor may run Python code) */
    for (Py_ssize_t i = 0; i < n; i++) e->avals[i] = Py_NewRef(avals[i]);
    e->n = n;
    e->names = kw == NULL ? NULL : Py_NewRef(kw);
    e->values = kw == NULL ? NULL : PyTuple_New(PyTuple_GET_SIZE(kw));
    for (Py_ssize_t i = 0; e->values != NULL && i < PyTuple_GET_SIZE(kw); i++)
        PyTuple_SET_ITEM(e->values, i, Py_NewRef(args[n + i]));
    e->aval = Py_NewRef(PyTuple_GET_ITEM(ent, 0));
    e->fn = Py_NewRef(PyTuple_GET_ITEM(ent, 1));
    Py_DECREF(ent);
    entry_clear(&old);
    if (kw != NULL && e->values == NULL) { entry_clear(e); return NULL; }
    return e;
}

static PyObject *host_value(PyObject *arr, PyObject *aval) {
    PyObject *v = host_type->tp_alloc(host_type, 0);
    if (v == NULL) return NULL;
    SLOT(v, off_np) = Py_NewRef(arr);
    SLOT(v, off_aval) = Py_NewRef(aval);
    SLOT(v, off_buf) = Py_NewRef(Py_None);
    SLOT(v, off_donor) = Py_NewRef(Py_None);
    return v;
}

/* whether a HostValue's device buffer (made for a jit call) is live: is_deleted() False (a donated one is not) */
static int live(PyObject *buf) {
    PyObject *d = PyObject_CallMethodNoArgs(buf, str_is_deleted);
    if (d == NULL) PyErr_Clear();
    Py_XDECREF(d);
    return d == Py_False;
}

static PyArrayObject *host_array(PyObject *v) {   /* HostValue v's ndarray where v is host-held, else NULL */
    if (host_type == NULL || Py_TYPE(v) != host_type || (SLOT(v, off_buf) != Py_None && !live(SLOT(v, off_buf))))
        return NULL;
    return (PyObject *)Py_TYPE(SLOT(v, off_np)) == ndarray ? (PyArrayObject *)SLOT(v, off_np) : NULL;
}

static PyObject *hostimpl_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kw) {
    HostImpl *self = (HostImpl *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *avals[MAXN], *arrs[MAXN];
    int fast = n >= 1 && n <= MAXN;
    for (Py_ssize_t i = 0; fast && i < n; i++)
        if ((fast = host_array(args[i]) != NULL)) avals[i] = SLOT(args[i], off_aval);
    if (!fast) return PyObject_Vectorcall(self->impl, args, nargsf, kw);
    Entry *e = find(self, args, n, kw, avals);
    if (e == NULL) return PyErr_Occurred() ? NULL : PyObject_Vectorcall(self->impl, args, nargsf, kw);
    PyObject *fn = Py_NewRef(e->fn), *aval = Py_NewRef(e->aval), *sh = PyTuple_GET_ITEM(aval, 0), *out;
    size_t big = (size_t)PyDataType_ELSIZE((PyArray_Descr *)PyTuple_GET_ITEM(aval, 1));   /* (the result's bytes) */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sh); i++) big *= (size_t)PyLong_AsSsize_t(PyTuple_GET_ITEM(sh, i));
    for (Py_ssize_t i = 0; i < n; i++) {   /* (the handler where an operand or the result is of its blocks' size) */
        arrs[i] = Py_NewRef(SLOT(args[i], off_np));
        big = Py_MAX(big, (size_t)PyArray_NBYTES((PyArrayObject *)arrs[i]));
    }
    out = quiet_vcall(fn, arrs, n, NULL, big >= KEEP_MIN);
    for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(arrs[i]);
    Py_DECREF(fn);
    PyObject *res = NULL;
    if (out != NULL && PyTuple_GET_SIZE(sh) == 0 && PyArray_IsScalar(out, Generic))   /* (a ufunc's 0-d result: */
        Py_SETREF(out, PyArray_FromScalar(out, NULL));   /* a 0-d array here, not a Python box: ~0.3 us a 0-d op) */
    if (out == Py_NotImplemented) res = PyObject_Vectorcall(self->xla, args, nargsf, kw);
    else if (out != NULL && (PyObject *)Py_TYPE(out) == ndarray) {   /* (of the aval's dtype object and shape) */
        PyArrayObject *o = (PyArrayObject *)out;
        int same = (PyObject *)PyArray_DESCR(o) == PyTuple_GET_ITEM(aval, 1) && PyArray_NDIM(o) == PyTuple_GET_SIZE(sh);
        for (int i = 0; same && i < PyArray_NDIM(o); i++)
            same = PyArray_DIM(o, i) == PyLong_AsSsize_t(PyTuple_GET_ITEM(sh, i));
        res = same ? host_value(out, aval) : PyObject_CallFunctionObjArgs(self->box, out, aval, NULL);
    } else if (out != NULL) res = PyObject_CallFunctionObjArgs(self->box, out, aval, NULL);
    Py_XDECREF(out);
    Py_DECREF(aval);
    return res;
}

/* ---------------------------------------------------------------- one element
 * element(v, key[, value]): x[key] for x the ndarray of HostValue v and a key selecting one element -- a Python int
 * or a tuple of them, one per dimension, each in range -- the commonest eager access in a library loop (`d[i]`,
 * `a[i, j] = d[i]`), one C call. Read: a new 0-d HostValue (its aval host.shared_aval's for v's dtype and weak
 * type, found in AVALS, that function's table, once made), or None. Write (value: a 0-d HostValue of x's dtype;
 * the caller has made sure that x's memory may take it, host_basic_index._assign): whether done. v and value
 * host-held (no device buffer, or a live one); every other case is None / False and the Python path runs (and
 * raises). The element's bytes move as they are (subnormals kept, as NumPy's copies do). */
static PyObject *avals = NULL, *no_shape = NULL;   /* AVALS: (shape, dtype, weak) -> aval (host.shared_aval's); () */

static PyObject *element(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 && nargs != 3) return PyErr_Format(PyExc_TypeError, "element(v, key[, value])");
    PyArrayObject *a = host_array(args[0]), *b = nargs == 3 ? host_array(args[2]) : NULL;
    PyObject *key = args[1], *const *ks = PyTuple_CheckExact(key) ? ((PyTupleObject *)key)->ob_item : &key;
    Py_ssize_t nk = PyTuple_CheckExact(key) ? PyTuple_GET_SIZE(key) : PyLong_CheckExact(key) ? 1 : -1;
    int ok = a != NULL && nk >= 1 && nk == PyArray_NDIM(a) && (nargs == 2 || (b != NULL && PyArray_NDIM(b) == 0
             && PyArray_ISWRITEABLE(a) && PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(b))));
    char *p = ok ? PyArray_BYTES(a) : NULL;
    for (Py_ssize_t i = 0; ok && i < nk; i++) {
        int over = 0;
        long long j = PyLong_CheckExact(ks[i]) ? PyLong_AsLongLongAndOverflow(ks[i], &over) : 0;
        npy_intp n = PyArray_DIM(a, (int)i);
        ok = PyLong_CheckExact(ks[i]) && !over && j >= -(long long)n && j < (long long)n;
        p += ok ? (j < 0 ? j + n : j) * PyArray_STRIDE(a, (int)i) : 0;
    }
    if (nargs == 3 && ok) memmove(p, PyArray_DATA(b), (size_t)PyArray_ITEMSIZE(a));
    if (nargs == 3) return PyBool_FromLong(ok);   /* (a write: whether done) */
    if (!ok) Py_RETURN_NONE;
    Py_INCREF(a);   /* (held across the allocations below, which may collect) */
    PyObject *av = SLOT(args[0], off_aval), *aval = NULL, *out = NULL, *res = NULL;   /* (an aval: ShapedArray) */
    PyObject *k = PyTuple_Check(av) && PyTuple_GET_SIZE(av) == 3
        ? PyTuple_Pack(3, no_shape, PyTuple_GET_ITEM(av, 1), PyTuple_GET_ITEM(av, 2)) : NULL;
    if (k != NULL) aval = Py_XNewRef(PyDict_GetItemWithError(avals, k));
    Py_XDECREF(k);
    if (aval != NULL) {
        Py_INCREF(PyArray_DESCR(a));   /* (stolen) */
        out = PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(a), 0, NULL, NULL, NULL, 0, NULL);
    }
    if (out != NULL) {
        memcpy(PyArray_DATA((PyArrayObject *)out), p, (size_t)PyArray_ITEMSIZE(a));
        res = host_value(out, aval);
    }
    Py_XDECREF(out); Py_XDECREF(aval); Py_DECREF(a);
    return res != NULL || PyErr_Occurred() ? res : Py_NewRef(Py_None);
}

/* sole_holder(vals, family): whether the memory of host values `vals` (a list or tuple) may be overwritten: they are
 * writeable views of one ndarray owning it (or that array), no device buffer aliases it, and nothing else -- a NumPy
 * view, an export (np.asarray, memoryview, DLPack), another value -- refers to it (the counts show each reference).
 * One value: its caller gives it up; a view family's (family true): each held by its array alone (its slot, vals).
 * Every eager write asks (host.sole_holder; in Python it cost ~0.45 us of a ~1.9 us element write). */
static int sole(PyObject *vals, int family) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(vals);
    PyObject **hv = PySequence_Fast_ITEMS(vals), *owner = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (host_type == NULL || Py_TYPE(hv[i]) != host_type || SLOT(hv[i], off_buf) != Py_None
                || (family && Py_REFCNT(hv[i]) > 2) || (PyObject *)Py_TYPE(SLOT(hv[i], off_np)) != ndarray)
            return 0;
        PyArrayObject *arr = (PyArrayObject *)SLOT(hv[i], off_np);
        PyObject *o = PyArray_BASE(arr) == NULL ? (PyObject *)arr : PyArray_BASE(arr);
        owner = owner == NULL ? o : owner;   /* (a read-only view, np.broadcast_to's, is never written) */
        if (o != owner || !PyArray_ISWRITEABLE(arr) || ((PyObject *)arr != o && Py_REFCNT(arr) > 1)) return 0;
    }
    return owner != NULL && (PyObject *)Py_TYPE(owner) == ndarray
           && PyArray_CHKFLAGS((PyArrayObject *)owner, NPY_ARRAY_OWNDATA) && Py_REFCNT(owner) <= n;
}

static PyObject *sole_holder(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !(PyList_CheckExact(args[0]) || PyTuple_CheckExact(args[0])))
        return PyErr_Format(PyExc_TypeError, "sole_holder(vals: list or tuple, family)");
    return PyBool_FromLong(sole(args[0], PyObject_IsTrue(args[1])));
}

/* family_element(vals, i, key, value): element(vals[i], key, value) where sole_holder(vals, True) -- a view family's
 * one-element write (`a[i, i] = d[i]` on a slice of a larger array) in one C call: whether done */
static PyObject *family_element(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[0]) || !PyLong_CheckExact(args[1]))
        return PyErr_Format(PyExc_TypeError, "family_element(vals: list, i: int, key, value)");
    Py_ssize_t i = PyLong_AsSsize_t(args[1]);
    if (i < 0 || i >= PyList_GET_SIZE(args[0]) || !sole(args[0], 1)) Py_RETURN_FALSE;
    PyObject *w[3] = {PyList_GET_ITEM(args[0], i), args[2], args[3]};
    return element(self, w, 3);
}

static PyObject *hostimpl_new(PyTypeObject *t, PyObject *args, PyObject *kwds) {
    PyObject *impl, *lookup, *xla, *box;
    if (!PyArg_ParseTuple(args, "OOOO:HostImpl", &impl, &lookup, &xla, &box)) return NULL;
    HostImpl *self = (HostImpl *)t->tp_alloc(t, 0);   /* (zeroed: an empty table) */
    if (self == NULL) return NULL;
    self->vectorcall = hostimpl_call;
    self->impl = Py_NewRef(impl); self->lookup = Py_NewRef(lookup);
    self->xla = Py_NewRef(xla); self->box = Py_NewRef(box);
    return (PyObject *)self;
}

static void hostimpl_dealloc(PyObject *op) {
    HostImpl *self = (HostImpl *)op;
    for (int i = 0; i < NENT; i++) entry_clear(&self->table[i]);
    Py_XDECREF(self->impl); Py_XDECREF(self->lookup); Py_XDECREF(self->xla); Py_XDECREF(self->box);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject HostImplType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xla._fpmode.HostImpl",
    .tp_basicsize = sizeof(HostImpl),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(HostImpl, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = hostimpl_new,
    .tp_dealloc = hostimpl_dealloc,
    .tp_doc = "HostImpl(impl, lookup, xla, box): a primitive's eager impl on host-held values",
};

static PyMethodDef methods[] = {
    {"get", get, METH_NOARGS, "get() -> the flush bits set in this thread now (0 or FLUSH)"},
    {"set", set, METH_O, "set(bits) -> the old bits: this thread's flush bits set to 0 or FLUSH"},
    {"configure", configure, METH_VARARGS, "configure(var, quiet, HostValue, ndarray): see the source"},
#if defined(__GLIBC__)
    {"kept", kept_info, METH_NOARGS, "kept() -> (blocks, bytes) that the kernels' memory handler keeps now"},
#endif
    {"element", (PyCFunction)(void (*)(void))element, METH_FASTCALL,
     "element(v, key[, value]): one element of HostValue v read (a 0-d HostValue or None) or written (whether)"},
    {"family_element", (PyCFunction)(void (*)(void))family_element, METH_FASTCALL,
     "family_element(vals, i, key, value): element(vals[i], key, value) where sole_holder(vals, True)"},
    {"sole_holder", (PyCFunction)(void (*)(void))sole_holder, METH_FASTCALL,
     "sole_holder(vals, family): whether the memory of host values vals may be overwritten (see the source)"},
    {"quiet", (PyCFunction)(void (*)(void))quiet_call, METH_FASTCALL | METH_KEYWORDS,
     "quiet(fn, *args, **kwargs): fn's result, run as a kernel runs (warnings silenced, subnormals flushed)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fpmode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fpmode(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (_import_array() < 0) {
        Py_DECREF(m);
        return NULL;
    }
#if defined(__GLIBC__)   /* (NumPy's default handler, whose blocks are glibc's; another there: none set) */
    PyObject *np_handler = PyDataMem_GetHandler();
    PyDataMem_Handler *h = np_handler == NULL ? NULL : PyCapsule_GetPointer(np_handler, "mem_handler");
    if (h != NULL && strcmp(h->name, "default_allocator") == 0
            && (handler = PyCapsule_New(&k_handler, "mem_handler", NULL)) != NULL) {
        base = h->allocator;
        pthread_atfork(NULL, NULL, unlock_in_child);
    }
    Py_XDECREF(np_handler);
    PyErr_Clear();
#endif
    avals = PyDict_New();
    no_shape = PyTuple_New(0);
    str_is_deleted = PyUnicode_InternFromString("is_deleted");
    if (str_is_deleted == NULL || avals == NULL || no_shape == NULL || PyModule_AddObjectRef(m, "AVALS", avals) < 0
            || PyType_Ready(&HostImplType) < 0 || PyModule_AddObjectRef(m, "HostImpl", (PyObject *)&HostImplType) < 0
            || PyModule_AddObject(m, "supported", PyBool_FromLong(FPMODE_FLUSH != 0)) < 0
            || PyModule_AddIntConstant(m, "FLUSH", (long)FPMODE_FLUSH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
