/* The Array node's pytree callbacks, in C: jaxlib's C++ jit dispatcher calls flatten once per Array
 * argument and unflatten once per Array result of every jit call, and a Python frame for each costs
 * ~0.15 us of a ~4 us call. They do what jit_dispatch.array_node's Python versions do: flatten gives
 * ((value,), None), for a host-held value its live device buffer, and leaves every other case (no
 * buffer yet, a deleted one) to the Python fallback it is configured with, which makes the buffer or
 * raises; unflatten makes an eager Array around the buffer, as object.__new__ and two slot writes do.
 * Optional (pyproject.toml): where it is not built, the Python versions run. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

static PyTypeObject *box_type = NULL, *host_type = NULL;
static PyObject *eval_trace = NULL, *fallback = NULL, *is_deleted_name = NULL;
static Py_ssize_t off_v = -1, off_trace = -1, off_buf = -1;

static Py_ssize_t slot_offset(PyTypeObject *t, const char *name) {
    PyObject *d = PyDict_GetItemString(t->tp_dict, name);   /* borrowed */
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", t->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX || (m->flags & READONLY)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a writable object slot", t->tp_name, name);
        return -1;
    }
    return m->offset;
}

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *bt, *ht, *ev, *fb;
    if (!PyArg_ParseTuple(args, "O!O!OO:configure", &PyType_Type, &bt, &PyType_Type, &ht, &ev, &fb))
        return NULL;
    Py_ssize_t ov = slot_offset((PyTypeObject *)bt, "_v"), ot = slot_offset((PyTypeObject *)bt, "_trace");
    if (ov < 0 || ot < 0) return NULL;
    Py_ssize_t ob = slot_offset((PyTypeObject *)ht, "_buf");
    if (ob < 0) return NULL;
    Py_INCREF(bt); Py_INCREF(ht); Py_INCREF(ev); Py_INCREF(fb);
    Py_XSETREF(box_type, (PyTypeObject *)bt); Py_XSETREF(host_type, (PyTypeObject *)ht);
    Py_XSETREF(eval_trace, ev); Py_XSETREF(fallback, fb);
    off_v = ov; off_trace = ot; off_buf = ob;
    Py_RETURN_NONE;
}

static PyObject *pair(PyObject *leaf) {   /* ((leaf,), None) */
    PyObject *kids = PyTuple_Pack(1, leaf);
    if (kids == NULL) return NULL;
    PyObject *out = PyTuple_Pack(2, kids, Py_None);
    Py_DECREF(kids);
    return out;
}

static PyObject *flatten(PyObject *self, PyObject *a) {
    if (box_type == NULL || Py_TYPE(a) != box_type) return PyObject_CallOneArg(fallback, a);
    PyObject *v = SLOT(a, off_v);
    if (v == NULL) return PyObject_CallOneArg(fallback, a);
    if (Py_TYPE(v) != host_type) return pair(v);
    PyObject *b = SLOT(v, off_buf);
    if (b == NULL || b == Py_None) return PyObject_CallOneArg(fallback, a);
    PyObject *dead = PyObject_CallMethodNoArgs(b, is_deleted_name);
    if (dead == NULL) return NULL;
    int is_dead = PyObject_IsTrue(dead);
    Py_DECREF(dead);
    if (is_dead < 0) return NULL;
    return is_dead ? PyObject_CallOneArg(fallback, a) : pair(b);
}

static PyObject *unflatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "unflatten(aux, children) takes 2 arguments");
        return NULL;
    }
    if (box_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch nodes are not configured");
        return NULL;
    }
    PyObject *kids = args[1], *leaf;
    if (PyTuple_CheckExact(kids) && PyTuple_GET_SIZE(kids) == 1) {
        leaf = PyTuple_GET_ITEM(kids, 0);
        Py_INCREF(leaf);
    } else {
        PyObject *seq = PySequence_Tuple(kids);
        if (seq == NULL) return NULL;
        if (PyTuple_GET_SIZE(seq) != 1) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "an Array node has exactly one child");
            return NULL;
        }
        leaf = PyTuple_GET_ITEM(seq, 0);
        Py_INCREF(leaf);
        Py_DECREF(seq);
    }
    PyObject *a = box_type->tp_alloc(box_type, 0);
    if (a == NULL) { Py_DECREF(leaf); return NULL; }
    SLOT(a, off_v) = leaf;
    Py_INCREF(eval_trace);
    SLOT(a, off_trace) = eval_trace;
    return a;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(array_type, host_value_type, eval_trace, fallback)"},
    {"flatten", flatten, METH_O, "An Array argument as jit's executable takes it: ((buffer,), None)."},
    {"unflatten", (PyCFunction)(void (*)(void))unflatten, METH_FASTCALL, "unflatten(aux, (buffer,)): an eager Array."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dispatch_nodes", NULL, -1, methods};

PyMODINIT_FUNC PyInit__dispatch_nodes(void) {
    is_deleted_name = PyUnicode_InternFromString("is_deleted");
    if (is_deleted_name == NULL) return NULL;
    return PyModule_Create(&module);
}
