/* transforms.core.bind's eager case in C: while no thread traces (core.tracing[0] == 0) a bind is its primitive's
 * impl called with the same arguments -- impl_rules[prim](*args, **params), the keywords passed through as they
 * came (no tuple or dict made) -- and every other case (a trace current somewhere, a primitive without an impl
 * yet) is core's Python bind, which it is configured with. ~1,000 CPU instructions less per eager primitive (a
 * Python frame packing *args and **params). Optional (pyproject.toml): where it is not built, the Python bind runs.
 *
 *   configure(tracing, impl_rules, bind)   core's trace counter (a list), its impl table (a dict), its Python bind
 *   bind(prim, *args, **params)            what core's Python bind returns */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *tracing = NULL, *impl_rules = NULL, *fallback = NULL;

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *t, *r, *fb;
    if (!PyArg_ParseTuple(args, "O!O!O:configure", &PyList_Type, &t, &PyDict_Type, &r, &fb)) return NULL;
    Py_INCREF(t); Py_INCREF(r); Py_INCREF(fb);
    Py_XSETREF(tracing, t); Py_XSETREF(impl_rules, r); Py_XSETREF(fallback, fb);
    Py_RETURN_NONE;
}

static PyObject *bind(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    if (fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "transforms._bind is not configured");
        return NULL;
    }
    int on = nargs < 1 || PyList_GET_SIZE(tracing) == 0 ? 1 : PyObject_IsTrue(PyList_GET_ITEM(tracing, 0));
    if (on < 0) return NULL;
    PyObject *impl = on ? NULL : PyDict_GetItemWithError(impl_rules, args[0]);   /* borrowed */
    if (impl == NULL) return PyErr_Occurred() ? NULL : PyObject_Vectorcall(fallback, args, nargs, kw);
    Py_INCREF(impl);   /* (held: the call may replace the table's entry) */
    PyObject *out = PyObject_Vectorcall(impl, args + 1, nargs - 1, kw);
    Py_DECREF(impl);
    return out;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(tracing, impl_rules, bind): core's counter, table and bind"},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL | METH_KEYWORDS,
     "bind(prim, *args, **params): prim bound to args (transforms.core.bind)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bind", NULL, -1, methods};

PyMODINIT_FUNC PyInit__bind(void) { return PyModule_Create(&module); }
