/* A small eager mean / var / std of a 2-d array in one C call: NumPy's own loops, in NumPy's order.
 *
 * Why: on a 20x5 array xp.std is seven NumPy calls (sum, divide, subtract, square, sum, divide, sqrt), ~3.4 us of
 * its ~5 us, nearly all of it the ufunc machinery around ~100 elements of work; library code (scikit-learn's
 * scalers, scipy.stats) makes such calls on small arrays by the thousand. The same seven steps here are loop
 * calls (xla/_loops.h: loops of the ufuncs' tables, made by xla/_parallel_loops.c) on a C-contiguous (m, n) array
 * reduced over axis 0 or 1 (or any C-contiguous array over all its axes: "axis 2"), in the order NumPy's reduce
 * takes them there -- over axis 0 the rows added in turn into the accumulator, over axis 1 one reduce-loop call
 * per row (over all axes, the array as one row), the accumulator starting at `start` (NumPy 2: +0.0)
 * or else at the first element -- so the bits are those of xla/host_moments.py's NumPy calls (tests and a probe
 * at first use check it). Any other layout or shape (a row or column of one, not contiguous) is declined.
 *
 * Python API:
 *   plan(add, sub, mul, div, sqrt, fmt, itemsize, axis, count, dcount, start) -> plan   loops (capsules; sub,
 *       mul, sqrt may be None: a mean; sqrt None: a variance); fmt: the buffer format; count/dcount/start: bytes
 *       of one element (dcount None: a mean; start None: the first element); axis 0, 1 or 2 (all axes)
 *   run(plan, x, out) -> bool   out = the moment of x; False (nothing written) where x or out does not fit
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include "_loops.h"

typedef struct {
    loop_fn add, sub, mul, div, sqrt;
    void *add_d, *sub_d, *mul_d, *div_d, *sqrt_d;
    PyObject *keep;            /* the loop capsules, alive while the plan is */
    char fmt[8];
    int axis, var, root, has_start;
    char count[16], dcount[16], start[16];
} plan_t;

#define PLAN_CAPSULE "xla._small_moments.plan"

static void plan_free(PyObject *cap) {
    plan_t *p = PyCapsule_GetPointer(cap, PLAN_CAPSULE);
    if (p != NULL) {
        Py_XDECREF(p->keep);
        PyMem_Free(p);
    }
}

static int take_loop(PyObject *cap, int nargs, loop_fn *fn, void **data) {
    if (cap == Py_None) {
        *fn = NULL;
        return 0;
    }
    loop_spec *L = PyCapsule_GetPointer(cap, LOOP_CAPSULE);
    if (L == NULL) return -1;
    if (L->nargs != nargs) {
        PyErr_SetString(PyExc_TypeError, "plan: a loop of the wrong arity");
        return -1;
    }
    *fn = L->fn;
    *data = L->data;
    return 0;
}

static int take_bytes(PyObject *b, Py_ssize_t size, char *dst) {
    if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) != size || size > 16) {
        PyErr_SetString(PyExc_TypeError, "plan: count, dcount and start are the bytes of one element");
        return -1;
    }
    memcpy(dst, PyBytes_AS_STRING(b), size);
    return 0;
}

static PyObject *plan(PyObject *self, PyObject *args) {
    PyObject *add, *sub, *mul, *div, *sqrt_, *count, *dcount, *start;
    const char *fmt;
    int axis;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "OOOOOsniOOO:plan", &add, &sub, &mul, &div, &sqrt_, &fmt, &size, &axis, &count,
                          &dcount, &start))
        return NULL;
    if (axis < 0 || axis > 2 || strlen(fmt) >= 8 || size < 1 || size > 16) {
        PyErr_SetString(PyExc_ValueError, "plan: axis 0, 1 or 2 (all), a buffer format, an item size");
        return NULL;
    }
    plan_t *p = PyMem_Calloc(1, sizeof(plan_t));
    if (p == NULL) return PyErr_NoMemory();
    p->axis = axis;
    p->var = dcount != Py_None;
    p->root = sqrt_ != Py_None;
    p->has_start = start != Py_None;
    strcpy(p->fmt, fmt);
    if (take_loop(add, 3, &p->add, &p->add_d) < 0 || take_loop(div, 3, &p->div, &p->div_d) < 0 ||
        take_loop(sub, 3, &p->sub, &p->sub_d) < 0 || take_loop(mul, 3, &p->mul, &p->mul_d) < 0 ||
        take_loop(sqrt_, 2, &p->sqrt, &p->sqrt_d) < 0 || take_bytes(count, size, p->count) < 0 ||
        (p->var && take_bytes(dcount, size, p->dcount) < 0) || (p->has_start && take_bytes(start, size, p->start) < 0))
        goto fail;
    if (p->add == NULL || p->div == NULL || (p->var && (p->sub == NULL || p->mul == NULL))) {
        PyErr_SetString(PyExc_TypeError, "plan: add and div always, sub and mul for a variance");
        goto fail;
    }
    p->keep = PyTuple_Pack(5, add, sub, mul, div, sqrt_);
    if (p->keep == NULL) goto fail;
    PyObject *cap = PyCapsule_New(p, PLAN_CAPSULE, plan_free);
    if (cap == NULL) goto fail;
    return cap;
fail:
    Py_XDECREF(p->keep);
    PyMem_Free(p);
    return NULL;
}

/* out (k elements) = x (m x n, C-contiguous) summed over p->axis, in NumPy's order */
static void sum_axis(const plan_t *p, char *x, Py_ssize_t m, Py_ssize_t n, Py_ssize_t isz, char *out) {
    if (p->axis == 0) {   /* the rows in turn, added elementwise into the accumulator */
        Py_ssize_t steps[3] = {isz, isz, isz}, i = 0;
        if (p->has_start) {
            for (Py_ssize_t j = 0; j < n; j++) memcpy(out + j * isz, p->start, isz);
        } else {
            memcpy(out, x, n * isz);
            i = 1;
        }
        for (; i < m; i++) {
            char *a[3] = {out, x + i * n * isz, out};
            p->add(a, &n, steps, p->add_d);
        }
    } else {              /* one reduce-loop call per row (axis 2: the one row): accumulator in, row, out */
        Py_ssize_t steps[3] = {0, isz, 0}, k = n - !p->has_start;
        for (Py_ssize_t r = 0; r < m; r++) {
            char *acc = out + r * isz, *row = x + r * n * isz;
            memcpy(acc, p->has_start ? p->start : row, isz);
            char *a[3] = {acc, row + (p->has_start ? 0 : isz), acc};
            if (k > 0) p->add(a, &k, steps, p->add_d);
        }
    }
}

/* v (k elements) /= the scalar `by` */
static void divide(const plan_t *p, char *v, Py_ssize_t k, Py_ssize_t isz, const char *by) {
    Py_ssize_t steps[3] = {isz, 0, isz};
    char *a[3] = {v, (char *)by, v};
    p->div(a, &k, steps, p->div_d);
}

static int fits(const Py_buffer *b, const char *fmt, Py_ssize_t isz) {
    const char *f = b->format ? b->format : "B";
    if (f[0] == '=' || f[0] == '@' || f[0] == '<') f++;
    if (strcmp(f, fmt) || b->itemsize != isz || (Py_uintptr_t)b->buf % (Py_uintptr_t)isz)
        return 0;
    Py_ssize_t want = isz;   /* C-contiguous */
    for (int d = b->ndim - 1; d >= 0; d--) {
        if (b->strides && b->strides[d] != want && b->shape[d] > 1) return 0;
        want *= b->shape[d];
    }
    return 1;
}

static PyObject *run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "run(plan, x, out)");
        return NULL;
    }
    plan_t *p = PyCapsule_GetPointer(args[0], PLAN_CAPSULE);
    if (p == NULL) return NULL;
    Py_buffer vx, vo;
    if (PyObject_GetBuffer(args[1], &vx, PyBUF_STRIDES | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(args[2], &vo, PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&vx);
        return NULL;
    }
    PyObject *result = Py_False;
    char *mean = NULL, *d = NULL;
    Py_ssize_t isz = vx.itemsize;
    if (!fits(&vx, p->fmt, isz) || !fits(&vo, p->fmt, isz)) goto done;
    Py_ssize_t m, n, k;
    if (p->axis == 2) {   /* every axis: NumPy takes a C-contiguous array as one row */
        m = 1;
        n = vx.len / isz;
        k = 1;
        if (n < 2 || vo.len != isz) goto done;
    } else {
        if (vx.ndim != 2 || vo.ndim != 1) goto done;
        m = vx.shape[0], n = vx.shape[1], k = p->axis == 0 ? n : m;
        if (m < 2 || n < 2 || vo.shape[0] != k) goto done;   /* (a row or column of one: NumPy takes it as 1-d) */
    }
    char *x = vx.buf, *out = vo.buf;
    if (!p->var) {
        sum_axis(p, x, m, n, isz, out);
        divide(p, out, k, isz, p->count);
        result = Py_True;
        goto done;
    }
    mean = PyMem_Malloc(k * isz);
    d = PyMem_Malloc(m * n * isz);
    if (mean == NULL || d == NULL) {
        result = PyErr_NoMemory();
        goto done;
    }
    sum_axis(p, x, m, n, isz, mean);
    divide(p, mean, k, isz, p->count);
    {   /* d = x - mean (broadcast along the reduced axis), then d *= d */
        Py_ssize_t steps[3] = {isz, p->axis == 0 ? isz : 0, isz};
        for (Py_ssize_t r = 0; r < m; r++) {
            char *a[3] = {x + r * n * isz, p->axis == 0 ? mean : mean + r * isz, d + r * n * isz};   /* (axis 2: r=0) */
            p->sub(a, &n, steps, p->sub_d);
        }
        Py_ssize_t all = m * n, sq[3] = {isz, isz, isz};
        char *a[3] = {d, d, d};
        p->mul(a, &all, sq, p->mul_d);
    }
    sum_axis(p, d, m, n, isz, out);
    divide(p, out, k, isz, p->dcount);
    if (p->root) {
        Py_ssize_t steps[2] = {isz, isz};
        char *a[2] = {out, out};
        p->sqrt(a, &k, steps, p->sqrt_d);
    }
    result = Py_True;
done:
    PyMem_Free(mean);
    PyMem_Free(d);
    PyBuffer_Release(&vx);
    PyBuffer_Release(&vo);
    Py_XINCREF(result);
    return result;
}

static PyMethodDef methods[] = {
    {"plan", plan, METH_VARARGS, "plan(add, sub, mul, div, sqrt, fmt, itemsize, axis, count, dcount, start)"},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "run(plan, x, out) -> bool: out = the moment"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_small_moments", NULL, -1, methods};

PyMODINIT_FUNC PyInit__small_moments(void) {
    return PyModule_Create(&module);
}
