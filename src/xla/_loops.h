/* What xla's C extensions share about NumPy's ufunc loops: the head of a ufunc object (its loop table) and a loop
 * taken from it (xla/_parallel_loops.c makes them; xla/_small_moments.c runs them too). */
#ifndef XLA_LOOPS_H
#define XLA_LOOPS_H
#include <Python.h>

/* NumPy's 1-d inner loop: args (inputs, then outputs), the element count, each operand's step in bytes, data */
typedef void (*loop_fn)(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data);

/* numpy/ufuncobject.h's PyUFuncObject up to its type table (unchanged since NumPy 1.x) */
typedef struct {
    PyObject_HEAD
    int nin, nout, nargs;
    int identity;
    loop_fn *functions;
    void *const *data;
    int ntypes;
    int reserved1;
    const char *name;
    const char *types;
} ufunc_head;

#define MAXARGS 4

/* a loop of a ufunc's table (or a copy loop), in a capsule named LOOP_CAPSULE */
typedef struct {
    loop_fn fn;
    void *data;
    int nargs;                 /* operands, the output last */
    PyObject *ufunc;           /* kept alive while the loop is */
    char formats[MAXARGS][8];  /* each operand's buffer format */
} loop_spec;

#define LOOP_CAPSULE "xla._parallel_loops.loop"

#endif
