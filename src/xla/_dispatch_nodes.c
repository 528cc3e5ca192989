/* The Array node's pytree callbacks, in C: jaxlib's C++ jit dispatcher calls flatten once per Array
 * argument and unflatten once per Array result of every jit call, and a Python frame for each costs
 * ~0.15 us of a ~4 us call. They do what jit_dispatch.array_node's Python versions do: flatten gives
 * ((value,), None), for a host-held value its live device buffer, and leaves every other case (no
 * buffer yet, a deleted one) to the Python fallback it is configured with, which makes the buffer or
 * raises; unflatten makes an eager Array around the buffer, as the namespace's wrap does.
 * Optional (pyproject.toml): where it is not built, the Python versions run. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

static PyTypeObject *box_type = NULL, *host_type = NULL;
static PyObject *eval_trace = NULL, *fallback = NULL, *is_deleted_name = NULL;
static Py_ssize_t off_v = -1, off_trace = -1, off_base = -1, off_views = -1, off_buf = -1;

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
    Py_ssize_t oba = slot_offset((PyTypeObject *)bt, "_base"), ovw = slot_offset((PyTypeObject *)bt, "_views");
    if (oba < 0 || ovw < 0) return NULL;
    Py_ssize_t ob = slot_offset((PyTypeObject *)ht, "_buf");
    if (ob < 0) return NULL;
    Py_INCREF(bt); Py_INCREF(ht); Py_INCREF(ev); Py_INCREF(fb);
    Py_XSETREF(box_type, (PyTypeObject *)bt); Py_XSETREF(host_type, (PyTypeObject *)ht);
    Py_XSETREF(eval_trace, ev); Py_XSETREF(fallback, fb);
    off_v = ov; off_trace = ot; off_base = oba; off_views = ovw; off_buf = ob;
    Py_RETURN_NONE;
}

static PyObject *pair(PyObject *leaf) {   /* ((leaf,), None) */
    PyObject *kids = PyTuple_Pack(1, leaf);
    if (kids == NULL) return NULL;
    PyObject *out = PyTuple_Pack(2, kids, Py_None);
    Py_DECREF(kids);
    return out;
}

static int not_configured(void) {
    PyErr_SetString(PyExc_RuntimeError, "dispatch nodes are not configured");
    return -1;
}

static PyObject *flatten(PyObject *self, PyObject *a) {
    if (fallback == NULL && not_configured()) return NULL;
    if (Py_TYPE(a) != box_type) return PyObject_CallOneArg(fallback, a);
    PyObject *v = SLOT(a, off_v);
    if (v == NULL) return PyObject_CallOneArg(fallback, a);
    if (Py_TYPE(v) != host_type) return pair(v);
    PyObject *b = SLOT(v, off_buf), *out;
    if (b == NULL || b == Py_None) return PyObject_CallOneArg(fallback, a);
    Py_INCREF(b);   /* (held: is_deleted may let another thread replace the slot's buffer) */
    PyObject *dead = PyObject_CallMethodNoArgs(b, is_deleted_name);
    int is_dead = dead == NULL ? -1 : PyObject_IsTrue(dead);
    Py_XDECREF(dead);
    out = is_dead < 0 ? NULL : is_dead ? PyObject_CallOneArg(fallback, a) : pair(b);
    Py_DECREF(b);
    return out;
}

/* an eager Array of `leaf` (owned by EVAL, no view family), as array_namespace._helpers.wrap makes it */
static PyObject *new_box(PyObject *leaf) {
    PyObject *a = box_type->tp_alloc(box_type, 0);
    if (a == NULL) return NULL;
    Py_INCREF(leaf);
    SLOT(a, off_v) = leaf;
    Py_INCREF(eval_trace);
    SLOT(a, off_trace) = eval_trace;
    Py_INCREF(Py_None);
    SLOT(a, off_base) = Py_None;
    Py_INCREF(Py_None);
    SLOT(a, off_views) = Py_None;
    return a;
}

static PyObject *unflatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "unflatten(aux, children) takes 2 arguments");
        return NULL;
    }
    if (box_type == NULL && not_configured()) return NULL;
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
    PyObject *a = new_box(leaf);
    Py_DECREF(leaf);
    return a;
}


/* ---------------------------------------------------------------- wrap
 * The namespace's box of a raw value (array_namespace/_helpers.py `wrap`, every namespace function's result), in C
 * where it is built: outside a trace (transforms.core.tracing[0] == 0) an Array of v owned by EVAL, as unflatten
 * makes; inside one, the Python wrap it is configured with (which reads this thread's trace). */
static PyObject *tracing = NULL, *wrap_fallback = NULL;

static PyObject *configure_wrap(PyObject *self, PyObject *args) {
    PyObject *t, *fb;
    if (!PyArg_ParseTuple(args, "O!O:configure_wrap", &PyList_Type, &t, &fb)) return NULL;
    Py_INCREF(t); Py_INCREF(fb);
    Py_XSETREF(tracing, t); Py_XSETREF(wrap_fallback, fb);
    Py_RETURN_NONE;
}

static PyObject *wrap(PyObject *self, PyObject *v) {
    if ((box_type == NULL || tracing == NULL) && not_configured()) return NULL;
    int on = PyList_GET_SIZE(tracing) == 0 ? 1 : PyObject_IsTrue(PyList_GET_ITEM(tracing, 0));
    if (on != 0) return on < 0 ? NULL : PyObject_CallOneArg(wrap_fallback, v);
    return new_box(v);
}


/* ---------------------------------------------------------------- guarded calls
 * A guarded variant's program outputs its guard vector beside the result (transforms/jit_guards.py); the C++
 * dispatcher's repeat call rebuilds its result through the output tree, whose root is a node made by `check`:
 * it reads the vector (one read, the buffer protocol) and returns the result when the vector is one of the
 * accepted ones (a set of bytes), else a GuardMiss(vector bytes) in its place, which the Dispatcher wrapping
 * the dispatcher (what jit(f) returns) hands to its Python fallback with the call's arguments. (Not an
 * exception: one raised through jaxlib's C++ costs ~20 us.) */

static PyObject *guard_miss = NULL, *to_bytes = NULL, *number_fallback = NULL;

static PyObject *configure_guards(PyObject *self, PyObject *args) {
    PyObject *miss, *tb, *nf;
    if (!PyArg_ParseTuple(args, "OOO:configure_guards", &miss, &tb, &nf)) return NULL;
    if (!PyType_Check(miss)) {
        PyErr_SetString(PyExc_TypeError, "configure_guards: the first argument must be a class");
        return NULL;
    }
    Py_INCREF(miss); Py_INCREF(tb); Py_INCREF(nf);
    Py_XSETREF(guard_miss, miss); Py_XSETREF(to_bytes, tb); Py_XSETREF(number_fallback, nf);
    Py_RETURN_NONE;
}

/* The Python number `conv` (float, int, bool, complex) makes of one element in native byte order, format `f`
 * (the buffer protocol's), or NULL without an error where this does not know the pair (then Python converts). */
static PyObject *scalar(PyObject *conv, const char *f, const char *p) {
    if (*f == '=' || *f == '@' || *f == '<') f++;
    double d;
    long long i;
    unsigned long long u;
    if (f[0] == 'Z' && (f[1] == 'd' || f[1] == 'f') && f[2] == 0) {
        if (conv != (PyObject *)&PyComplex_Type) return NULL;
        return f[1] == 'd' ? PyComplex_FromDoubles(((double *)p)[0], ((double *)p)[1])
                           : PyComplex_FromDoubles(((float *)p)[0], ((float *)p)[1]);
    }
    if (f[0] == 0 || f[1] != 0) return NULL;
    switch (f[0]) {
    case 'd': d = *(double *)p; goto real;
    case 'f': d = *(float *)p; goto real;
    case 'q': i = *(long long *)p; goto integer;
    case 'l': i = *(long *)p; goto integer;
    case 'i': i = *(int *)p; goto integer;
    case 'h': i = *(short *)p; goto integer;
    case 'b': i = *(signed char *)p; goto integer;
    case 'Q': u = *(unsigned long long *)p; goto uinteger;
    case 'L': u = *(unsigned long *)p; goto uinteger;
    case 'I': u = *(unsigned int *)p; goto uinteger;
    case 'H': u = *(unsigned short *)p; goto uinteger;
    case 'B': u = *(unsigned char *)p; goto uinteger;
    case '?': i = *(unsigned char *)p != 0;
        if (conv == (PyObject *)&PyBool_Type) return PyBool_FromLong((long)i);
        goto integer;
    default: return NULL;
    }
real:
    if (conv == (PyObject *)&PyFloat_Type) return PyFloat_FromDouble(d);
    return NULL;
integer:
    if (conv == (PyObject *)&PyLong_Type) return PyLong_FromLongLong(i);
    if (conv == (PyObject *)&PyFloat_Type) return PyFloat_FromDouble((double)i);
    return NULL;
uinteger:
    if (conv == (PyObject *)&PyLong_Type) return PyLong_FromUnsignedLongLong(u);
    return NULL;
}

/* A Python number the function returns (jit_dispatch._Number): conv of the program's 0-d output, read in
 * place; any other case (no buffer protocol, a dtype or conversion not above) is the Python fallback's. */
static PyObject *number(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "number(conv, (buffer,)) takes 2 arguments");
        return NULL;
    }
    if (number_fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "number outputs are not configured");
        return NULL;
    }
    PyObject *kids = args[1];
    if (PyTuple_CheckExact(kids) && PyTuple_GET_SIZE(kids) == 1) {
        Py_buffer view;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(kids, 0), &view, PyBUF_FORMAT) == 0) {
            PyObject *out = NULL;
            if (view.format != NULL && view.len == view.itemsize && view.len > 0)
                out = scalar(args[0], view.format, (const char *)view.buf);
            PyBuffer_Release(&view);
            if (out != NULL || PyErr_Occurred()) return out;
        } else {
            PyErr_Clear();
        }
    }
    return PyObject_Vectorcall(number_fallback, args, 2, NULL);
}

static PyObject *vector_bytes(PyObject *vec) {   /* the vector's bytes: read in place, else by to_bytes(vec) */
    Py_buffer view;
    if (PyObject_GetBuffer(vec, &view, PyBUF_SIMPLE) == 0) {   /* (a contiguous vector: no strides asked) */
        PyObject *out = PyBytes_FromStringAndSize(view.buf, view.len);
        PyBuffer_Release(&view);
        return out;
    }
    PyErr_Clear();   /* (no buffer protocol here: a device not on the host) */
    return PyObject_CallOneArg(to_bytes, vec);
}

static PyObject *check(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "check(accepted, (result, vector)) takes 2 arguments");
        return NULL;
    }
    if (guard_miss == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "guard checks are not configured");
        return NULL;
    }
    PyObject *accepted = args[0], *kids = PySequence_Tuple(args[1]);
    if (kids == NULL) return NULL;
    if (PyTuple_GET_SIZE(kids) != 2 || !PyAnySet_Check(accepted)) {
        Py_DECREF(kids);
        PyErr_SetString(PyExc_ValueError, "check: needs a set and two children (result, guard vector)");
        return NULL;
    }
    PyObject *got = vector_bytes(PyTuple_GET_ITEM(kids, 1));
    if (got == NULL) { Py_DECREF(kids); return NULL; }
    int ok = PySet_Contains(accepted, got);
    if (ok == 1) {
        PyObject *out = PyTuple_GET_ITEM(kids, 0);
        Py_INCREF(out);
        Py_DECREF(kids); Py_DECREF(got);
        return out;
    }
    Py_DECREF(kids);
    PyObject *out = ok == 0 ? PyObject_CallOneArg(guard_miss, got) : NULL;
    Py_DECREF(got);
    return out;
}


/* ---------------------------------------------------------------- pmap repeats
 * A repeat call of a pmap whose replicas communicate (xla/pmap_runtime.py `repeat` and `_execute`: the same
 * steps). jaxlib's C++ dispatcher cannot run it: the program first waits for its inputs and for the last such
 * program (XLA:CPU's rendezvous deadlock), and in Python the steps before the launch cost ~20 us of a ~100 us
 * psum. Only the plain case is here -- outside any trace, every argument a live buffer laid out as the program
 * takes it, one process (an armed token: pmap_runtime.fastpath) -- and anything else is the dispatcher's, whose
 * miss runs the Python path. */
static PyObject *rp_table = NULL, *rp_armed, *rp_buffer, *rp_flatten, *rp_lock, *rp_in_flight, *rp_error;
static PyObject *n_aval, *n_sharding, *n_block, *n_acquire, *n_release, *n_execute, *n_token, *n_consume,
    *n_unflatten, *n_exe, *n_handlers, *n_in_shardings, *kw_tokens;

static PyObject *configure_repeats(PyObject *self, PyObject *args) {
    PyObject *t, *a, *bt, *fl, *lk, *inf, *err;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO!O:configure_repeats", &PyDict_Type, &t, &PySet_Type, &a, &PyType_Type,
                          &bt, &fl, &lk, &PyList_Type, &inf, &err))
        return NULL;
    if (PyList_GET_SIZE(inf) != 1) {
        PyErr_SetString(PyExc_ValueError, "configure_repeats: the in-flight list holds one item");
        return NULL;
    }
    if (n_aval == NULL) {
        const char *names[] = {"aval", "_sharding", "block_until_ready", "acquire", "release", "execute_sharded",
                               "consume_token", "consume_with_handlers", "unflatten", "exe", "handlers",
                               "in_shardings"};
        PyObject **slots[] = {&n_aval, &n_sharding, &n_block, &n_acquire, &n_release, &n_execute, &n_token,
                              &n_consume, &n_unflatten, &n_exe, &n_handlers, &n_in_shardings};
        for (int i = 0; i < 12; i++)
            if ((*slots[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
        if ((kw_tokens = Py_BuildValue("(s)", "with_tokens")) == NULL) return NULL;
    }
    Py_INCREF(t); Py_INCREF(a); Py_INCREF(bt); Py_INCREF(fl); Py_INCREF(lk); Py_INCREF(inf); Py_INCREF(err);
    Py_XSETREF(rp_table, t); Py_XSETREF(rp_armed, a); Py_XSETREF(rp_buffer, bt); Py_XSETREF(rp_flatten, fl);
    Py_XSETREF(rp_lock, lk); Py_XSETREF(rp_in_flight, inf); Py_XSETREF(rp_error, err);
    Py_RETURN_NONE;
}

static int call_method(PyObject *o, PyObject *name) {   /* o.name(), its result dropped; -1 on an error */
    PyObject *r = PyObject_CallMethodNoArgs(o, name);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* _execute's waiting launch: under the lock, wait for the operands and the last such program, run, keep the
 * token; the raw results (handled). */
static PyObject *launch(PyObject *prog, PyObject *bufs) {
    PyObject *exe = PyObject_GetAttr(prog, n_exe), *handlers = PyObject_GetAttr(prog, n_handlers), *out = NULL;
    if (exe == NULL || handlers == NULL || call_method(rp_lock, n_acquire) < 0) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(bufs); i++)
        if (call_method(PyList_GET_ITEM(bufs, i), n_block) < 0) goto unlock;
    PyObject *prev = PyList_GET_ITEM(rp_in_flight, 0);
    if (prev != Py_None) {
        Py_INCREF(prev);
        int bad = call_method(prev, n_block);
        Py_DECREF(prev);
        if (bad && !PyErr_ExceptionMatches(rp_error)) goto unlock;
        PyErr_Clear();   /* (that program's failure is its own results' error, not this call's) */
        Py_INCREF(Py_None);
        PyList_SetItem(rp_in_flight, 0, Py_None);
    }
    PyObject *cargs[3] = {exe, bufs, Py_True};
    PyObject *res = PyObject_VectorcallMethod(n_execute, cargs, 2, kw_tokens);
    if (res == NULL) goto unlock;
    PyObject *tok = PyObject_CallMethodNoArgs(res, n_token);
    if (tok != NULL) {
        PyList_SetItem(rp_in_flight, 0, tok);
        out = PyObject_CallMethodOneArg(res, n_consume, handlers);
    }
    Py_DECREF(res);
unlock:;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (call_method(rp_lock, n_release) < 0) {
        Py_CLEAR(out);
        Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
    } else {
        PyErr_Restore(et, ev, tb);
    }
done:
    Py_XDECREF(exe); Py_XDECREF(handlers);
    return out;
}

/* A vectorcall's arguments as (args tuple, kwargs dict) in *pos and *kw (new references); -1 on an error. */
static int call_parts(PyObject *const *args, size_t nargsf, PyObject *kwnames, PyObject **pos, PyObject **kw) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    *pos = PyTuple_New(n);
    *kw = PyDict_New();
    if (*pos == NULL || *kw == NULL) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(*pos, i, args[i]);
    }
    for (Py_ssize_t i = 0; i < nkw; i++)
        if (PyDict_SetItem(*kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) return -1;
    return 0;
}

/* The key pmap_runtime._laid_out makes of the call's flattened arguments, and the arguments, when every one is a
 * live buffer; NULL (no error) otherwise. */
static PyObject *repeat_key(PyObject *token, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                            PyObject **leaves) {
    PyObject *pos = NULL, *kw = NULL, *key = NULL, *flat = NULL;
    if (call_parts(args, nargsf, kwnames, &pos, &kw) < 0) goto done;
    PyObject *call = PyTuple_Pack(2, pos, kw);
    flat = call == NULL ? NULL : PyObject_CallOneArg(rp_flatten, call);
    Py_XDECREF(call);
    if (flat == NULL || !PyTuple_Check(flat) || PyTuple_GET_SIZE(flat) != 2 ||
        !PyList_Check(PyTuple_GET_ITEM(flat, 0)))
        goto done;
    PyObject *ls = PyTuple_GET_ITEM(flat, 0);
    Py_ssize_t nl = PyList_GET_SIZE(ls);
    if ((key = PyTuple_New(2 + nl)) == NULL) goto done;
    Py_INCREF(token); PyTuple_SET_ITEM(key, 0, token);
    Py_INCREF(PyTuple_GET_ITEM(flat, 1)); PyTuple_SET_ITEM(key, 1, PyTuple_GET_ITEM(flat, 1));
    for (Py_ssize_t i = 0; i < nl; i++) {
        PyObject *x = PyList_GET_ITEM(ls, i), *av, *sh, *dead;
        if (Py_TYPE(x) != (PyTypeObject *)rp_buffer || (dead = PyObject_CallMethodNoArgs(x, is_deleted_name)) == NULL)
            goto fail;
        int gone = PyObject_IsTrue(dead);
        Py_DECREF(dead);
        if (gone != 0 || (av = PyObject_GetAttr(x, n_aval)) == NULL) goto fail;
        if ((sh = PyObject_GetAttr(x, n_sharding)) == NULL) { Py_DECREF(av); goto fail; }
        PyObject *pair = PyTuple_Pack(2, av, sh);
        Py_DECREF(av); Py_DECREF(sh);
        if (pair == NULL) goto fail;
        PyTuple_SET_ITEM(key, 2 + i, pair);
    }
    Py_INCREF(ls);
    *leaves = ls;
    goto done;
fail:
    Py_CLEAR(key);
done:
    Py_XDECREF(pos); Py_XDECREF(kw); Py_XDECREF(flat);
    PyErr_Clear();   /* (any failure here: the dispatcher's path, which raises what it raises) */
    return key;
}

/* The repeated call's result; NULL with *handled 0 where this is not the plain case. */
static PyObject *repeat(PyObject *token, PyObject *const *args, size_t nargsf, PyObject *kwnames, int *handled) {
    *handled = 0;
    if (rp_table == NULL || tracing == NULL || PyDict_GET_SIZE(rp_table) == 0 || PyList_GET_SIZE(tracing) == 0)
        return NULL;
    PyObject *on = PyList_GET_ITEM(tracing, 0);
    if (!PyLong_CheckExact(on) || PyLong_AsLong(on) != 0 || PySet_Contains(rp_armed, token) != 1) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *leaves = NULL, *key = repeat_key(token, args, nargsf, kwnames, &leaves), *out = NULL, *bufs = NULL;
    if (key == NULL) return NULL;
    PyObject *hit = PyDict_GetItemWithError(rp_table, key), *in_sh = NULL;
    Py_XINCREF(hit);   /* (held: while the launch waits, another thread may clear the table) */
    if (hit == NULL || !PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 5 || PyTuple_GET_ITEM(hit, 4) != Py_False ||
        !PyList_Check(PyTuple_GET_ITEM(hit, 2)))
        goto done;
    PyObject *prog = PyTuple_GET_ITEM(hit, 0), *consts = PyTuple_GET_ITEM(hit, 2);
    Py_ssize_t nc = PyList_GET_SIZE(consts), nl = PyList_GET_SIZE(leaves);
    if ((in_sh = PyObject_GetAttr(prog, n_in_shardings)) == NULL || !PyList_Check(in_sh) ||
        PyList_GET_SIZE(in_sh) != nc + nl)
        goto done;
    for (Py_ssize_t i = 0; i < nl; i++)   /* laid out as the program takes it (else placed: the Python path) */
        if (PyTuple_GET_ITEM(PyTuple_GET_ITEM(key, 2 + i), 1) != PyList_GET_ITEM(in_sh, nc + i)) goto done;
    if ((bufs = PySequence_List(consts)) == NULL || PyList_SetSlice(bufs, nc, nc, leaves) < 0) goto done;
    *handled = 1;
    PyObject *raw = launch(prog, bufs);
    if (raw != NULL) {
        out = PyObject_CallMethodOneArg(PyTuple_GET_ITEM(hit, 1), n_unflatten, raw);
        Py_DECREF(raw);
    }
done:
    if (!*handled) PyErr_Clear();
    Py_XDECREF(key); Py_XDECREF(leaves); Py_XDECREF(hit); Py_XDECREF(in_sh); Py_XDECREF(bufs);
    return out;
}

typedef struct {
    PyObject_HEAD
    PyObject *inner, *fallback, *token, *dict, *weaklist;
    vectorcallfunc vectorcall;
} Dispatcher;

/* inner(*args, **kw), or where that is a GuardMiss: fallback(args, kwargs, the GuardMiss) */
static PyObject *dispatcher_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Dispatcher *d = (Dispatcher *)self;
    if (d->token != NULL) {
        int handled;
        PyObject *done = repeat(d->token, args, nargsf, kwnames, &handled);
        if (handled) return done;
    }
    PyObject *value = PyObject_Vectorcall(d->inner, args, nargsf, kwnames), *out = NULL;
    if (value == NULL || guard_miss == NULL || Py_TYPE(value) != (PyTypeObject *)guard_miss) return value;
    PyObject *pos = NULL, *kw = NULL;
    if (call_parts(args, nargsf, kwnames, &pos, &kw) < 0) goto done;
    out = PyObject_CallFunctionObjArgs(d->fallback, pos, kw, value, NULL);
done:
    Py_XDECREF(pos); Py_XDECREF(kw); Py_XDECREF(value);
    return out;
}

static PyObject *dispatcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *inner, *fallback, *token = NULL;
    if (!PyArg_ParseTuple(args, "OO|O:Dispatcher", &inner, &fallback, &token)) return NULL;
    if (!PyCallable_Check(inner) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Dispatcher(inner, fallback) takes two callables");
        return NULL;
    }
    Dispatcher *d = (Dispatcher *)type->tp_alloc(type, 0);
    if (d == NULL) return NULL;
    Py_INCREF(inner); Py_INCREF(fallback);
    d->inner = inner; d->fallback = fallback;
    d->token = token == Py_None ? NULL : token;
    Py_XINCREF(d->token);
    d->vectorcall = dispatcher_vectorcall;
    return (PyObject *)d;
}

static int dispatcher_traverse(Dispatcher *d, visitproc visit, void *arg) {
    Py_VISIT(d->inner); Py_VISIT(d->fallback); Py_VISIT(d->token); Py_VISIT(d->dict);
    return 0;
}

static int dispatcher_clear(Dispatcher *d) {
    Py_CLEAR(d->inner); Py_CLEAR(d->fallback); Py_CLEAR(d->token); Py_CLEAR(d->dict);
    return 0;
}

static void dispatcher_dealloc(Dispatcher *d) {
    PyObject_GC_UnTrack(d);
    if (d->weaklist != NULL) PyObject_ClearWeakRefs((PyObject *)d);
    dispatcher_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static PyObject *dispatcher_getattro(PyObject *self, PyObject *name) {   /* its own, else the inner one's */
    PyObject *out = PyObject_GenericGetAttr(self, name);
    if (out != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError) || ((Dispatcher *)self)->inner == NULL)
        return out;
    PyErr_Clear();
    return PyObject_GetAttr(((Dispatcher *)self)->inner, name);
}

static PyObject *dispatcher_get(PyObject *self, PyObject *obj, PyObject *type) {   /* a method, as functions */
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *dispatcher_repr(Dispatcher *d) {
    return d->inner == NULL ? PyUnicode_FromString("<Dispatcher>") : PyObject_Repr(d->inner);
}

static PyObject *dispatcher_self(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_INCREF(self);   /* copy.copy / copy.deepcopy: itself, as of a function */
    return self;
}

static PyMethodDef dispatcher_methods[] = {
    {"__copy__", (PyCFunction)(void (*)(void))dispatcher_self, METH_FASTCALL, "itself (as a function's copy)"},
    {"__deepcopy__", (PyCFunction)(void (*)(void))dispatcher_self, METH_FASTCALL, "itself (as a function's copy)"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef dispatcher_members[] = {
    {"_inner", T_OBJECT, offsetof(Dispatcher, inner), READONLY, "the jaxlib dispatcher"},
    {NULL},
};

static PyTypeObject DispatcherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xla._dispatch_nodes.Dispatcher",
    .tp_basicsize = sizeof(Dispatcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Dispatcher(inner, fallback, token=None): calls inner (jaxlib's C++ dispatcher); a call whose guard "
              "check gave a GuardMiss goes to fallback(args, kwargs, the GuardMiss). With a pmap's token, a plain "
              "repeat of a program whose replicas communicate runs here (configure_repeats).",
    .tp_new = dispatcher_new,
    .tp_dealloc = (destructor)dispatcher_dealloc,
    .tp_traverse = (traverseproc)dispatcher_traverse,
    .tp_clear = (inquiry)dispatcher_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Dispatcher, vectorcall),
    .tp_getattro = dispatcher_getattro,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_descr_get = dispatcher_get,
    .tp_repr = (reprfunc)dispatcher_repr,
    .tp_dictoffset = offsetof(Dispatcher, dict),
    .tp_weaklistoffset = offsetof(Dispatcher, weaklist),
    .tp_members = dispatcher_members,
    .tp_methods = dispatcher_methods,
};

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(array_type, host_value_type, eval_trace, fallback)"},
    {"flatten", flatten, METH_O, "An Array argument as jit's executable takes it: ((buffer,), None)."},
    {"unflatten", (PyCFunction)(void (*)(void))unflatten, METH_FASTCALL, "unflatten(aux, (buffer,)): an eager Array."},
    {"configure_wrap", configure_wrap, METH_VARARGS, "configure_wrap(tracing, fallback): transforms.core.tracing"},
    {"wrap", wrap, METH_O, "wrap(v): the namespace's Array of raw value v (the fallback's, inside a trace)"},
    {"configure_guards", configure_guards, METH_VARARGS, "configure_guards(GuardMiss, to_bytes, number_fallback)"},
    {"number", (PyCFunction)(void (*)(void))number, METH_FASTCALL,
     "number(conv, (buffer,)): conv (float/int/bool/complex) of a 0-d output, as Python's conv(np.asarray(buffer))."},
    {"configure_repeats", configure_repeats, METH_VARARGS,
     "configure_repeats(table, armed tokens, buffer type, flatten, lock, in-flight list, runtime error type)"},
    {"check", (PyCFunction)(void (*)(void))check, METH_FASTCALL,
     "check(accepted, (result, vector)): result where the vector's bytes are accepted, else GuardMiss(bytes)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dispatch_nodes", NULL, -1, methods};

PyMODINIT_FUNC PyInit__dispatch_nodes(void) {
    is_deleted_name = PyUnicode_InternFromString("is_deleted");
    if (is_deleted_name == NULL) return NULL;
    if (PyType_Ready(&DispatcherType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&DispatcherType);
    if (PyModule_AddObject(m, "Dispatcher", (PyObject *)&DispatcherType) < 0) {
        Py_DECREF(&DispatcherType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
