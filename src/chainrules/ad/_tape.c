/* The reverse trace's fast paths, in C (optional; see chainrules/ad/_native.py).
 *
 * What this file does is what chainrules/ad/_reverse.py does in Python for the common
 * cases, with the same results bit for bit; every other case goes to the Python code,
 * which stays the reference (CHAINRULES_PURE_PYTHON=1 runs it alone):
 *
 *   - Dispatch: the dispatch point of rewritten code (`call`). A call f(x) of a NumPy
 *     ufunc, a built-in function or a NumPy function on one tracer of a ReverseTrace
 *     whose fast fact (the derived cache of _reverse.py) is a one-output scalar_rule's
 *     partials is recorded here as the tape tuple (part, (x,), y, [(1, index)]); any
 *     other call goes to the Python `call`.
 *   - OpMethod: the operators of tracers (Tracer.__mul__ ...), the same for a + b,
 *     a * b ... on tracers of one ReverseTrace and plain floats, ints and ndarrays.
 *   - Index: x[i] of a traced float array and an int, recorded as the index node
 *     (x, i, index) where x[i] is the AD's own rule.
 *   - Forward mode: Dispatch and OpMethod do what ForwardTrace._scalar does for a
 *     call on one tracer of a ForwardTrace holding a real float or array with a tangent
 *     of its kind (and a plain float or int as an operator's other operand):
 *     y = f(x), y_dot = partial * x_dot, the tracer (y, trace, y_dot).
 *   - backward: the loop of ReverseTrace.backward. A scalar tuple whose cotangent is a
 *     plain float or ndarray gets its cotangents here (`_scalar_backward`); every other
 *     entry goes to the trace's Python `_step`.
 *
 * The Python objects it works with (the Tracer class, the trace's tape, the partials)
 * are read through their __slots__' offsets, which `configure` takes from the classes'
 * member descriptors, so the classes stay plain Python classes.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <structmember.h>

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static int enabled;  /* configured and switched on */
static int forward;  /* forward mode configured too (configure_forward) */

static PyTypeObject *tracer_t, *rtrace_t, *ndarray_t, *partials_t, *leaf_t;
static PyTypeObject *ufunc_t, *npfunc_t;
static Py_ssize_t off_primal, off_trace, off_aux;            /* Tracer */
static Py_ssize_t off_tape, off_ctype, off_config;           /* ReverseTrace */
static Py_ssize_t off_raw, off_fn, off_nargs, off_quiet, off_uses_output, off_uses_xp,
    off_uses_wrt;
static PyObject *fast_cache;     /* dict: (f, types..., config type) -> fact */
static PyObject *fill;           /* fill(key, f, argtypes, config) -> fact */
static PyTypeObject *ftrace_t;   /* ForwardTrace */
static Py_ssize_t off_fctype, off_fconfig;
static PyObject *ffast_cache;    /* _forward's cache: (f, types..., config type) -> fact */
static PyObject *ffill;
static PyObject *boxable;        /* _tracer._boxable */
static PyObject *inplace_ids;    /* _tracer._INPLACE_FUNCS: id(f) -> name */
static PyObject *project_plain;  /* _reverse._project_plain */
static PyObject *accumulate;     /* _reverse._accumulate */
static PyObject *index_backward; /* _reverse._index_backward */
static PyObject *index_fact;     /* _reverse._INDEX: the fast fact of x[i] */
static PyObject *input_entry;    /* _reverse._INPUT: the tape entry of an input */
static PyObject *plain_numbers;  /* tuple: number types taken as cotangents as they are */
static PyObject *namespace_of;   /* core.namespace_of */
static PyObject *np_module;
static PyObject *complexfloating;
static PyObject *errstate_var;   /* NumPy's error-state context variable, or NULL */
static PyObject *ignore_all;     /* its "ignore all" value */

static PyObject *one, *two;      /* the ints 1 and 2 */
static PyObject *getitem;        /* operator.getitem */
static PyObject *slim_parts;     /* _memory.SLIM: the partials that skip a value */
static PyObject *slim_fn;        /* _memory.slim(part, args, y, parents) -> (args, y) */
static Py_ssize_t slim_min;      /* the smallest output (bytes) worth slimming */
static PyObject *s_nbytes;
static PyObject *s_dtype, *s_kind, *s_shape, *s_conj, *s_conjugate, *s_ndim;
static PyObject *kw_y, *kw_xp, *kw_y_xp, *s_y, *s_xp, *s_wrt;

/* The marker of "not a fast case": go to the Python code. Never returned to Python. */
static PyObject fallback_marker;
#define FALLBACK (&fallback_marker)

/* ---- small helpers ------------------------------------------------------------------ */

/* The dtype kind of an ndarray ('f', 'c', ...); 0 with an exception set on failure. */
static char
array_kind(PyObject *arr)
{
    PyObject *dt = PyObject_GetAttr(arr, s_dtype);
    if (dt == NULL) {
        return 0;
    }
    PyObject *k = PyObject_GetAttr(dt, s_kind);
    Py_DECREF(dt);
    if (k == NULL) {
        return 0;
    }
    char c = 0;
    if (PyUnicode_Check(k) && PyUnicode_GET_LENGTH(k) == 1) {
        c = (char)PyUnicode_READ_CHAR(k, 0);
    }
    else {
        PyErr_SetString(PyExc_TypeError, "dtype.kind is not a one-character string");
    }
    Py_DECREF(k);
    return c;
}

/* Whether an output y is traced (1), returned plain (0), or an error (-1): what
 * ReverseTrace.process's and binop's fast paths test. */
static int
output_traced(PyObject *y)
{
    PyTypeObject *ty = Py_TYPE(y);
    if (ty == ndarray_t) {
        char k = array_kind(y);
        if (k == 0) {
            return -1;
        }
        return k == 'f' || k == 'c';
    }
    if (ty == &PyFloat_Type) {
        return 1;
    }
    PyObject *r = PyObject_CallOneArg(boxable, y);
    if (r == NULL) {
        return -1;
    }
    int ok = PyObject_IsTrue(r);
    Py_DECREF(r);
    return ok;
}

static PyObject *
new_tracer(PyObject *primal, PyObject *trace, Py_ssize_t idx)
{
    PyObject *aux = PyLong_FromSsize_t(idx);
    if (aux == NULL) {
        return NULL;
    }
    PyObject *t = tracer_t->tp_alloc(tracer_t, 0);
    if (t == NULL) {
        Py_DECREF(aux);
        return NULL;
    }
    SLOT(t, off_primal) = Py_NewRef(primal);
    SLOT(t, off_trace) = Py_NewRef(trace);
    SLOT(t, off_aux) = aux;
    return t;
}

/* Append (part, args, y, parents) to the trace's tape; the tracer of y. Steals nothing. */
static PyObject *
record(PyObject *trace, PyObject *part, PyObject *args, PyObject *y, PyObject *parents)
{
    PyObject *tape = SLOT(trace, off_tape);
    if (tape == NULL || !PyList_CheckExact(tape)) {
        PyErr_SetString(PyExc_TypeError, "a reverse trace without a tape list");
        return NULL;
    }
    Py_ssize_t idx = PyList_GET_SIZE(tape);
    PyObject *entry;
    Py_ssize_t nbytes = 0;
    if (slim_parts != NULL && Py_TYPE(y) == ndarray_t && PyDict_GET_SIZE(slim_parts)
            && PyDict_Contains(slim_parts, part) == 1) {
        PyObject *nb = PyObject_GetAttr(y, s_nbytes);
        nbytes = nb == NULL ? -1 : PyLong_AsSsize_t(nb);
        Py_XDECREF(nb);
        if (nbytes == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (nbytes > 0 && nbytes >= slim_min) {
        /* the values its partials never read, replaced by stand-ins (_memory.slim) */
        PyObject *kept = PyObject_CallFunctionObjArgs(slim_fn, part, args, y, parents, NULL);
        if (kept == NULL) {
            return NULL;
        }
        if (!PyTuple_CheckExact(kept) || PyTuple_GET_SIZE(kept) != 2) {
            Py_DECREF(kept);
            PyErr_SetString(PyExc_TypeError, "slim must return a pair (args, y)");
            return NULL;
        }
        entry = PyTuple_Pack(4, part, PyTuple_GET_ITEM(kept, 0), PyTuple_GET_ITEM(kept, 1),
                             parents);
        Py_DECREF(kept);
    }
    else {
        entry = PyTuple_Pack(4, part, args, y, parents);
    }
    if (entry == NULL) {
        return NULL;
    }
    int rc = PyList_Append(tape, entry);
    Py_DECREF(entry);
    if (rc < 0) {
        return NULL;
    }
    return new_tracer(y, trace, idx);
}

/* The fast fact of a call of f on arguments of the types argtypes (a tuple) traced by
 * trace: the cache's entry for (f, types..., config type), filled on a miss (a new
 * reference); FALLBACK for an unhashable key (the Python path decides), NULL on an
 * error of the fill. */
static PyObject *
fact_in(PyObject *cache, PyObject *filler, PyObject *f, PyObject *argtypes,
        PyObject *ctype, PyObject *config)
{
    if (ctype == NULL || config == NULL) {
        return FALLBACK;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(argtypes);
    PyObject *key = PyTuple_New(n + 2);
    if (key == NULL) {
        return NULL;
    }
    PyTuple_SET_ITEM(key, 0, Py_NewRef(f));
    for (Py_ssize_t k = 0; k < n; k++) {
        PyTuple_SET_ITEM(key, k + 1, Py_NewRef(PyTuple_GET_ITEM(argtypes, k)));
    }
    PyTuple_SET_ITEM(key, n + 1, Py_NewRef(ctype));
    PyObject *fact = PyDict_GetItemWithError(cache, key);
    if (fact != NULL) {
        fact = Py_NewRef(fact);
    }
    else if (PyErr_Occurred()) {
        PyErr_Clear();
        fact = FALLBACK;
    }
    else {
        fact = PyObject_CallFunctionObjArgs(filler, key, f, argtypes, config, NULL);
    }
    Py_DECREF(key);
    return fact;
}

/* fact_in for a reverse trace's call: _reverse's cache. */
static PyObject *
fact_for(PyObject *f, PyObject *argtypes, PyObject *trace)
{
    return fact_in(fast_cache, fill, f, argtypes, SLOT(trace, off_ctype),
                   SLOT(trace, off_config));
}

/* The partials of a one-output scalar_rule when that is the call's fast fact (a new
 * reference); FALLBACK for any other fact, NULL on an error. */
static PyObject *
partials_for(PyObject *f, PyObject *argtypes, PyObject *trace)
{
    if (argtypes == NULL) {
        return NULL;
    }
    PyObject *part = fact_for(f, argtypes, trace);
    Py_DECREF(argtypes);
    if (part != NULL && part != FALLBACK && Py_TYPE(part) != partials_t) {
        Py_DECREF(part);
        return FALLBACK;
    }
    return part;
}

/* y = f(*args) of a scalar_rule whose partials are part: y itself when it carries no
 * tangent, else the tracer of the tape entry (part, args, y, parents). */
static PyObject *
record_scalar(PyObject *trace, PyObject *part, PyObject *f, PyObject *args,
              PyObject *parents)
{
    PyObject *y = PyObject_Vectorcall(f, PySequence_Fast_ITEMS(args), PyTuple_GET_SIZE(args),
                                      NULL);
    if (y == NULL) {
        return NULL;
    }
    int traced = output_traced(y);
    if (traced <= 0) {
        if (traced < 0) {
            Py_CLEAR(y);
        }
        return y;
    }
    PyObject *res = record(trace, part, args, y, parents);
    Py_DECREF(y);
    return res;
}

/* Append (pos, aux) to parents, unless aux is NULL (an untraced operand): 0, or -1. */
static int
add_parent(PyObject *parents, PyObject *pos, PyObject *aux)
{
    if (parents == NULL) {
        return -1;
    }
    if (aux == NULL) {
        return 0;
    }
    PyObject *pair = PyTuple_Pack(2, pos, aux);
    int rc = pair == NULL ? -1 : PyList_Append(parents, pair);
    Py_XDECREF(pair);
    return rc;
}

/* ---- forward mode --------------------------------------------------------------------- */

static PyObject *call_partials(PyObject *part, PyObject *args, PyObject *y, PyObject *wrt,
                               int quiet_arrays);
static PyObject *wrt_at(Py_ssize_t n, Py_ssize_t pos);

/* Whether the attribute name (shape, dtype) of two ndarrays is equal (1), not (0), or an
 * error (-1). */
static int
same_attr(PyObject *a, PyObject *b, PyObject *name)
{
    PyObject *va = PyObject_GetAttr(a, name);
    if (va == NULL) {
        return -1;
    }
    PyObject *vb = PyObject_GetAttr(b, name);
    if (vb == NULL) {
        Py_DECREF(va);
        return -1;
    }
    int r = va == vb ? 1 : PyObject_RichCompareBool(va, vb, Py_EQ);
    Py_DECREF(va);
    Py_DECREF(vb);
    return r;
}

static int
same_shape(PyObject *a, PyObject *b)
{
    return same_attr(a, b, s_shape);
}

static int
same_dtype(PyObject *a, PyObject *b)
{
    return same_attr(a, b, s_dtype);
}

/* ForwardTrace._scalar: f(*args) whose only traced argument, at pos, is the tracer t of
 * a forward trace; the traced output, or FALLBACK (the Python code decides). */
static PyObject *
forward_scalar(PyObject *f, PyObject *t, PyObject *args, Py_ssize_t pos)
{
    PyObject *trace = SLOT(t, off_trace), *p = SLOT(t, off_primal), *d = SLOT(t, off_aux);
    if (!forward || trace == NULL || p == NULL || d == NULL) {
        return FALLBACK;
    }
    PyTypeObject *tp = Py_TYPE(p);
    if ((tp != ndarray_t && tp != &PyFloat_Type) || Py_TYPE(d) != tp) {
        return FALLBACK;
    }
    if (tp == ndarray_t) {
        char k = array_kind(p);
        if (k == 0) {
            return NULL;
        }
        int ok = k == 'f' ? same_dtype(d, p) : 0;
        if (ok > 0) {
            ok = same_shape(d, p);
        }
        if (ok <= 0) {
            return ok < 0 ? NULL : FALLBACK;
        }
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *argtypes = PyTuple_New(n);
    if (argtypes == NULL) {
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyTuple_SET_ITEM(argtypes, k, Py_NewRef(Py_TYPE(PyTuple_GET_ITEM(args, k))));
    }
    PyObject *part = fact_in(ffast_cache, ffill, f, argtypes, SLOT(trace, off_fctype),
                             SLOT(trace, off_fconfig));
    Py_DECREF(argtypes);
    if (part == NULL || part == FALLBACK) {
        return part;
    }
    if (Py_TYPE(part) != partials_t) {  /* None: no scalar_rule, the general path */
        Py_DECREF(part);
        return FALLBACK;
    }
    PyObject *res = FALLBACK, *y = NULL, *ps = NULL, *wrt = NULL, *pd = NULL, *y_dot = NULL;
    PyObject *nargs_o = SLOT(part, off_nargs), *uw = SLOT(part, off_uses_wrt);
    Py_ssize_t nargs = nargs_o != NULL ? PyLong_AsSsize_t(nargs_o) : -1;
    if (nargs < 0 || uw == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "partials without their fields");
        }
        res = NULL;
        goto done;
    }
    y = PyObject_Vectorcall(f, PySequence_Fast_ITEMS(args), n, NULL);
    if (y == NULL) {
        res = NULL;
        goto done;
    }
    if (Py_TYPE(y) != tp) {
        goto done;
    }
    if (tp == ndarray_t) {
        int ok = same_shape(y, p);  /* (a broadcast against the other argument: Python) */
        if (ok <= 0) {
            res = ok < 0 ? NULL : FALLBACK;
            goto done;
        }
    }
    if (uw == Py_True) {
        wrt = wrt_at(n, pos);
        if (wrt == NULL) {
            res = NULL;
            goto done;
        }
    }
    ps = call_partials(part, args, y, wrt, tp == ndarray_t);
    if (ps == NULL || ps == FALLBACK) {
        res = ps;
        ps = NULL;
        goto done;
    }
    pd = nargs > 1 ? PySequence_GetItem(ps, pos) : Py_NewRef(ps);
    if (pd == NULL) {
        res = NULL;
        goto done;
    }
    y_dot = PyNumber_Multiply(pd, d);
    if (y_dot == NULL) {
        res = NULL;
        goto done;
    }
    if (Py_TYPE(y_dot) != tp) {
        goto done;
    }
    if (tp == ndarray_t) {
        int ok = same_dtype(y_dot, y);
        if (ok > 0) {
            ok = same_shape(y_dot, y);
        }
        if (ok <= 0) {
            res = ok < 0 ? NULL : FALLBACK;
            goto done;
        }
    }
    res = tracer_t->tp_alloc(tracer_t, 0);
    if (res != NULL) {
        SLOT(res, off_primal) = Py_NewRef(y);
        SLOT(res, off_trace) = Py_NewRef(trace);
        SLOT(res, off_aux) = Py_NewRef(y_dot);
    }
done:
    Py_DECREF(part);
    Py_XDECREF(y);
    Py_XDECREF(wrt);
    Py_XDECREF(ps);
    Py_XDECREF(pd);
    Py_XDECREF(y_dot);
    return res;
}

/* ---- recording ---------------------------------------------------------------------- */

/* f(a), a a Tracer: recorded here, or FALLBACK. */
static PyObject *
unary(PyObject *f, PyObject *a)
{
    PyObject *trace = SLOT(a, off_trace);
    PyObject *p = SLOT(a, off_primal);
    PyObject *aux = SLOT(a, off_aux);
    if (trace != NULL && p != NULL && Py_TYPE(trace) == ftrace_t) {
        PyObject *args = PyTuple_Pack(1, p);
        if (args == NULL) {
            return NULL;
        }
        PyObject *res = forward_scalar(f, a, args, 0);
        Py_DECREF(args);
        return res;
    }
    if (trace == NULL || p == NULL || aux == NULL || Py_TYPE(trace) != rtrace_t
            || Py_TYPE(p) == tracer_t) {
        return FALLBACK;
    }
    PyObject *part = partials_for(f, PyTuple_Pack(1, (PyObject *)Py_TYPE(p)), trace);
    if (part == NULL || part == FALLBACK) {
        return part;
    }
    PyObject *res = NULL;
    PyObject *args = PyTuple_Pack(1, p);
    PyObject *parents = PyList_New(0);
    if (args != NULL && add_parent(parents, one, aux) == 0) {
        res = record_scalar(trace, part, f, args, parents);
    }
    Py_XDECREF(args);
    Py_XDECREF(parents);
    Py_DECREF(part);
    return res;
}

static int
plain_operand(PyObject *v)
{
    return PyFloat_CheckExact(v) || PyLong_CheckExact(v) || Py_TYPE(v) == ndarray_t;
}

/* op(a, b) with a tracer on either side: recorded here, or FALLBACK. */
static PyObject *
binary(PyObject *op, PyObject *a, PyObject *b)
{
    int ta = Py_TYPE(a) == tracer_t, tb = Py_TYPE(b) == tracer_t;
    PyObject *trace = NULL, *pa = a, *pb = b;
    if (ta) {
        trace = SLOT(a, off_trace);
        pa = SLOT(a, off_primal);
        if (trace == NULL || pa == NULL || SLOT(a, off_aux) == NULL
                || Py_TYPE(pa) == tracer_t) {
            return FALLBACK;
        }
    }
    else if (!plain_operand(a)) {
        return FALLBACK;
    }
    if (tb) {
        PyObject *tr = SLOT(b, off_trace);
        pb = SLOT(b, off_primal);
        if (tr == NULL || pb == NULL || SLOT(b, off_aux) == NULL
                || Py_TYPE(pb) == tracer_t || (trace != NULL && tr != trace)) {
            return FALLBACK;
        }
        trace = tr;
    }
    else if (!plain_operand(b)) {
        return FALLBACK;
    }
    if (trace != NULL && Py_TYPE(trace) == ftrace_t) {
        /* ForwardTrace.binop's fast case: one tracer, a plain float or int */
        PyObject *other = ta ? b : a;
        if ((ta && tb) || !(PyFloat_CheckExact(other) || PyLong_CheckExact(other))) {
            return FALLBACK;
        }
        PyObject *args = PyTuple_Pack(2, pa, pb);
        if (args == NULL) {
            return NULL;
        }
        PyObject *res = forward_scalar(op, ta ? a : b, args, ta ? 0 : 1);
        Py_DECREF(args);
        return res;
    }
    if (trace == NULL || Py_TYPE(trace) != rtrace_t) {
        return FALLBACK;
    }
    PyObject *part = partials_for(
        op, PyTuple_Pack(2, (PyObject *)Py_TYPE(pa), (PyObject *)Py_TYPE(pb)), trace);
    if (part == NULL || part == FALLBACK) {
        return part;
    }
    PyObject *res = NULL;
    PyObject *args = PyTuple_Pack(2, pa, pb);
    PyObject *parents = PyList_New(0);
    if (args != NULL && add_parent(parents, one, ta ? SLOT(a, off_aux) : NULL) == 0
            && add_parent(parents, two, tb ? SLOT(b, off_aux) : NULL) == 0) {
        res = record_scalar(trace, part, op, args, parents);
    }
    Py_XDECREF(args);
    Py_XDECREF(parents);
    Py_DECREF(part);
    return res;
}

/* ---- Dispatch: the C front of `call` ---------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *py;    /* the Python dispatch point */
    PyObject *dict;  /* __dict__ (call.setitem, call.slice ...) */
    vectorcallfunc vectorcall;
} Dispatch;

static int
is_inplace(PyObject *f)
{
    PyObject *id = PyLong_FromVoidPtr(f);
    if (id == NULL) {
        return -1;
    }
    int r = PyDict_Contains(inplace_ids, id);
    Py_DECREF(id);
    return r;
}

static PyObject *
dispatch_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Dispatch *self = (Dispatch *)op;
    if (enabled && PyVectorcall_NARGS(nargsf) == 2 && kwnames == NULL
            && Py_TYPE(args[1]) == tracer_t) {
        PyObject *f = args[0];
        PyTypeObject *tf = Py_TYPE(f);
        int fits = tf == ufunc_t || tf == &PyCFunction_Type;
        if (!fits && tf == npfunc_t) {
            int r = is_inplace(f);
            if (r < 0) {
                return NULL;
            }
            fits = !r;
        }
        if (fits) {
            PyObject *res = unary(f, args[1]);
            if (res != FALLBACK) {
                return res;
            }
        }
    }
    return PyObject_Vectorcall(self->py, args, nargsf, kwnames);
}

static PyObject *
dispatch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *py;
    if (!PyArg_ParseTuple(args, "O:Dispatch", &py)) {
        return NULL;
    }
    Dispatch *self = (Dispatch *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->py = Py_NewRef(py);
    self->vectorcall = dispatch_vectorcall;
    return (PyObject *)self;
}

static int
dispatch_traverse(PyObject *op, visitproc visit, void *arg)
{
    Dispatch *self = (Dispatch *)op;
    Py_VISIT(self->py);
    Py_VISIT(self->dict);
    return 0;
}

static int
dispatch_clear(PyObject *op)
{
    Dispatch *self = (Dispatch *)op;
    Py_CLEAR(self->py);
    Py_CLEAR(self->dict);
    return 0;
}

static void
dispatch_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    dispatch_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
dispatch_repr(PyObject *op)
{
    return PyUnicode_FromFormat("<chainrules.ad dispatch point (C) of %R>",
                                ((Dispatch *)op)->py);
}


static PyGetSetDef dispatch_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject DispatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainrules.ad._tape.Dispatch",
    .tp_doc = "The dispatch point of rewritten code: the common traced calls recorded in "
              "C, every other call passed to the Python dispatch point it wraps.",
    .tp_basicsize = sizeof(Dispatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = dispatch_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Dispatch, vectorcall),
    .tp_dictoffset = offsetof(Dispatch, dict),
    .tp_traverse = dispatch_traverse,
    .tp_clear = dispatch_clear,
    .tp_dealloc = dispatch_dealloc,
    .tp_repr = dispatch_repr,
    .tp_getset = dispatch_getset,
};

/* ---- OpMethod: the operators of Tracer ------------------------------------------------ */

/* Tracer.__mul__ and the like: a method descriptor (called unbound, with the tracer
 * first, by the interpreter's operator slots: no frame and no bound method) that
 * records the common case itself and passes every other call to the Python
 * _binop(op, ufunc, a, b). */
typedef struct {
    PyObject_HEAD
    PyObject *op;     /* operator.mul ... */
    PyObject *ufunc;  /* np.multiply ... */
    PyObject *py;     /* the Python _binop */
    PyObject *name;   /* "__mul__" ... */
    int reflected;    /* __rmul__: other op self */
    vectorcallfunc vectorcall;
} OpMethod;

static PyObject *
opmethod_vectorcall(PyObject *o, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    OpMethod *m = (OpMethod *)o;
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_Format(PyExc_TypeError, "%U takes a tracer and one operand", m->name);
        return NULL;
    }
    PyObject *a = args[0], *b = args[1];
    if (m->reflected) {
        a = args[1];
        b = args[0];
    }
    if (enabled) {
        PyObject *res = binary(m->op, a, b);
        if (res != FALLBACK) {
            return res;
        }
    }
    PyObject *stack[4] = {m->op, m->ufunc, a, b};
    return PyObject_Vectorcall(m->py, stack, 4, NULL);
}

static PyObject *
opmethod_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *op, *ufunc, *py, *name;
    int reflected;
    if (!PyArg_ParseTuple(args, "OOOUp:OpMethod", &op, &ufunc, &py, &name, &reflected)) {
        return NULL;
    }
    OpMethod *self = (OpMethod *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->op = Py_NewRef(op);
    self->ufunc = Py_NewRef(ufunc);
    self->py = Py_NewRef(py);
    self->name = Py_NewRef(name);
    self->reflected = reflected;
    self->vectorcall = opmethod_vectorcall;
    return (PyObject *)self;
}

static PyObject *
opmethod_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static int
opmethod_traverse(PyObject *o, visitproc visit, void *arg)
{
    OpMethod *m = (OpMethod *)o;
    Py_VISIT(m->op);
    Py_VISIT(m->ufunc);
    Py_VISIT(m->py);
    return 0;
}

static int
opmethod_clear(PyObject *o)
{
    OpMethod *m = (OpMethod *)o;
    Py_CLEAR(m->op);
    Py_CLEAR(m->ufunc);
    Py_CLEAR(m->py);
    Py_CLEAR(m->name);
    return 0;
}

static void
opmethod_dealloc(PyObject *o)
{
    PyObject_GC_UnTrack(o);
    opmethod_clear(o);
    Py_TYPE(o)->tp_free(o);
}

static PyObject *
opmethod_repr(PyObject *o)
{
    return PyUnicode_FromFormat("<chainrules.ad Tracer.%U (C)>", ((OpMethod *)o)->name);
}

static PyMemberDef opmethod_members[] = {
    {"__name__", T_OBJECT, offsetof(OpMethod, name), READONLY, NULL},
    {"__wrapped__", T_OBJECT, offsetof(OpMethod, py), READONLY,
     "the Python function every case but the common one goes to"},
    {NULL},
};

static PyTypeObject OpMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainrules.ad._tape.OpMethod",
    .tp_doc = "OpMethod(op, ufunc, binop, name, reflected): an operator method of Tracer; "
              "the common case (tracers of one reverse trace, a scalar_rule) recorded in C, "
              "every other case passed to binop(op, ufunc, a, b).",
    .tp_basicsize = sizeof(OpMethod),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = opmethod_new,
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = opmethod_get,
    .tp_vectorcall_offset = offsetof(OpMethod, vectorcall),
    .tp_traverse = opmethod_traverse,
    .tp_clear = opmethod_clear,
    .tp_dealloc = opmethod_dealloc,
    .tp_repr = opmethod_repr,
    .tp_members = opmethod_members,
};

/* ---- Index: the C front of `_tracer._getitem_int` ------------------------------------ */

/* a[i] for a Tracer a of a ReverseTrace holding an ndarray and an int i, when x[i] is
 * the AD's own rule (the fast fact is index_fact): the index node (p, i, index). */
static PyObject *
index_node(PyObject *a, PyObject *i)
{
    if (Py_TYPE(a) != tracer_t || !PyLong_CheckExact(i)) {
        return FALLBACK;
    }
    PyObject *trace = SLOT(a, off_trace), *p = SLOT(a, off_primal), *aux = SLOT(a, off_aux);
    if (trace == NULL || p == NULL || aux == NULL || Py_TYPE(trace) != rtrace_t
            || Py_TYPE(p) != ndarray_t) {
        return FALLBACK;
    }
    PyObject *argtypes = PyTuple_Pack(2, (PyObject *)ndarray_t, (PyObject *)&PyLong_Type);
    if (argtypes == NULL) {
        return NULL;
    }
    PyObject *fact = fact_for(getitem, argtypes, trace);
    Py_DECREF(argtypes);
    if (fact == NULL || fact == FALLBACK) {
        return fact;
    }
    int is_index = fact == index_fact;
    Py_DECREF(fact);
    if (!is_index) {
        return FALLBACK;
    }
    PyObject *y = PyObject_GetItem(p, i);
    if (y == NULL) {
        return NULL;
    }
    char k = array_kind(p);
    if (k == 0) {
        Py_DECREF(y);
        return NULL;
    }
    if (k != 'f' && k != 'c') {
        return y;
    }
    PyObject *tape = SLOT(trace, off_tape);
    if (tape == NULL || !PyList_CheckExact(tape)) {
        Py_DECREF(y);
        PyErr_SetString(PyExc_TypeError, "a reverse trace without a tape list");
        return NULL;
    }
    Py_ssize_t idx = PyList_GET_SIZE(tape);
    PyObject *entry = PyTuple_Pack(3, p, i, aux);
    if (entry == NULL || PyList_Append(tape, entry) < 0) {
        Py_XDECREF(entry);
        Py_DECREF(y);
        return NULL;
    }
    Py_DECREF(entry);
    PyObject *res = new_tracer(y, trace, idx);
    Py_DECREF(y);
    return res;
}

static PyObject *
index_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Dispatch *self = (Dispatch *)op;  /* py is the Python _getitem_int */
    if (enabled && PyVectorcall_NARGS(nargsf) == 2 && kwnames == NULL) {
        PyObject *res = index_node(args[0], args[1]);
        if (res != FALLBACK) {
            return res;
        }
    }
    return PyObject_Vectorcall(self->py, args, nargsf, kwnames);
}

static PyObject *
index_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *self = dispatch_new(type, args, kwargs);
    if (self != NULL) {
        ((Dispatch *)self)->vectorcall = index_vectorcall;
    }
    return self;
}

static PyObject *
index_repr(PyObject *op)
{
    return PyUnicode_FromFormat("<chainrules.ad tracer x[i] (C) of %R>",
                                ((Dispatch *)op)->py);
}

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainrules.ad._tape.Index",
    .tp_doc = "index(x, i): x[i] of a traced float array recorded in C as an index node, "
              "every other case passed to the Python function it wraps.",
    .tp_basicsize = sizeof(Dispatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = index_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Dispatch, vectorcall),
    .tp_dictoffset = offsetof(Dispatch, dict),
    .tp_traverse = dispatch_traverse,
    .tp_clear = dispatch_clear,
    .tp_dealloc = dispatch_dealloc,
    .tp_repr = index_repr,
    .tp_getset = dispatch_getset,
};

/* ---- the backward pass ---------------------------------------------------------------- */

/* The wrt of a scalar node's partials (_reverse._wrt): True for each traced argument. */
static PyObject *
wrt_of(Py_ssize_t n, PyObject *parents)
{
    PyObject *wrt = PyTuple_New(n);
    if (wrt == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(wrt, i, Py_NewRef(Py_False));
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(parents); k++) {
        PyObject *par = PyList_GET_ITEM(parents, k);
        Py_ssize_t pos = -1;
        if (PyTuple_CheckExact(par) && PyTuple_GET_SIZE(par) >= 1) {
            pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(par, 0)) - 1;
        }
        if (pos < 0 || pos >= n) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_IndexError, "a scalar node's parent out of range");
            }
            Py_DECREF(wrt);
            return NULL;
        }
        Py_SETREF(PyTuple_GET_ITEM(wrt, pos), Py_NewRef(Py_True));
    }
    return wrt;
}

/* The partials of a scalar node (as the Python _scalar_backward calls them). */
/* The wrt of forward mode's partials: True at pos only. */
static PyObject *
wrt_at(Py_ssize_t n, Py_ssize_t pos)
{
    PyObject *wrt = PyTuple_New(n);
    if (wrt == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(wrt, i, Py_NewRef(i == pos ? Py_True : Py_False));
    }
    return wrt;
}

/* wrt: the partials' keyword argument when they take one (uses_wrt), else NULL;
 * quiet_arrays: silence NumPy's warnings for partials that are not quiet themselves too
 * (as _Partials.__call__ does when an argument is an array). */
static PyObject *
call_partials(PyObject *part, PyObject *args, PyObject *y, PyObject *wrt, int quiet_arrays)
{
    PyObject *raw = SLOT(part, off_raw), *fn = SLOT(part, off_fn);
    PyObject *quiet = SLOT(part, off_quiet);
    PyObject *uo = SLOT(part, off_uses_output), *ux = SLOT(part, off_uses_xp);
    PyObject *uw = SLOT(part, off_uses_wrt);
    if (raw == NULL || fn == NULL || quiet == NULL || uo == NULL || ux == NULL
            || uw == NULL) {
        PyErr_SetString(PyExc_TypeError, "partials without their fields");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > 8) {
        return FALLBACK;
    }
    PyObject *stack[11];  /* up to 8 arguments, y, xp and wrt */
    for (Py_ssize_t i = 0; i < n; i++) {
        stack[i] = PyTuple_GET_ITEM(args, i);
    }
    PyObject *kwnames = NULL;
    PyObject *xp = NULL;
    Py_ssize_t k = n;
    if (uo == Py_True) {
        stack[k++] = y;
        kwnames = kw_y;
    }
    if (ux == Py_True) {
        if (n == 1 && Py_TYPE(stack[0]) == ndarray_t) {
            xp = Py_NewRef(np_module);
        }
        else {
            xp = PyObject_CallOneArg(namespace_of, args);
            if (xp == NULL) {
                return NULL;
            }
        }
        stack[k++] = xp;
        kwnames = uo == Py_True ? kw_y_xp : kw_xp;
    }
    if (uw == Py_True) {
        /* wrt: which partials are needed; its own keyword names tuple */
        if (wrt == NULL) {
            PyErr_SetString(PyExc_SystemError, "partials taking wrt called without it");
            Py_XDECREF(xp);
            return NULL;
        }
        stack[k++] = wrt;
        kwnames = PyTuple_New(k - n);
        if (kwnames == NULL) {
            Py_XDECREF(xp);
            return NULL;
        }
        Py_ssize_t q = 0;
        if (uo == Py_True) {
            PyTuple_SET_ITEM(kwnames, q++, Py_NewRef(s_y));
        }
        if (ux == Py_True) {
            PyTuple_SET_ITEM(kwnames, q++, Py_NewRef(s_xp));
        }
        PyTuple_SET_ITEM(kwnames, q, Py_NewRef(s_wrt));
    }
    PyObject *p;
    if ((quiet == Py_True || quiet_arrays) && errstate_var != NULL) {
        /* what the quiet wrapper (part.fn) does, without its frame */
        PyObject *token = PyContextVar_Set(errstate_var, ignore_all);
        if (token == NULL) {
            Py_XDECREF(xp);
            if (uw == Py_True) {
                Py_DECREF(kwnames);
            }
            return NULL;
        }
        p = PyObject_Vectorcall(raw, stack, n, kwnames);
        if (PyContextVar_Reset(errstate_var, token) < 0) {
            Py_CLEAR(p);
        }
        Py_DECREF(token);
    }
    else {
        p = PyObject_Vectorcall(fn, stack, n, kwnames);
    }
    Py_XDECREF(xp);
    if (uw == Py_True) {
        Py_DECREF(kwnames);
    }
    return p;
}

/* g != x in type, shape or dtype (an ndarray's): 1 when g needs projecting onto x. */
static int
needs_projection(PyObject *x, PyObject *g)
{
    if (Py_TYPE(x) != Py_TYPE(g)) {
        return 1;
    }
    if (Py_TYPE(x) != ndarray_t) {
        return 0;
    }
    int same = same_shape(g, x);
    if (same > 0) {
        same = same_dtype(g, x);
    }
    return same < 0 ? -1 : !same;
}

/* Whether 1.0 * b is b itself: a float, or a real floating ndarray with ndim > 0. */
static int
unit_ok(PyObject *b)
{
    if (PyFloat_CheckExact(b)) {
        return 1;
    }
    if (Py_TYPE(b) != ndarray_t) {
        return 0;
    }
    PyObject *nd = PyObject_GetAttr(b, s_ndim);
    if (nd == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(nd);
    Py_DECREF(nd);
    if (truth <= 0) {
        return truth;
    }
    char k = array_kind(b);
    return k == 0 ? -1 : k == 'f';
}

/* conj(p) * b, as _scalar_backward computes it. */
static PyObject *
cotangent(PyObject *p, PyObject *b)
{
    PyTypeObject *tp = Py_TYPE(p);
    PyObject *c = NULL;
    if (tp == ndarray_t) {
        char k = array_kind(p);
        if (k == 0) {
            return NULL;
        }
        if (k == 'c') {
            c = PyObject_CallMethodNoArgs(p, s_conj);
            if (c == NULL) {
                return NULL;
            }
        }
    }
    else if (tp != &PyFloat_Type) {
        int cx = tp == &PyComplex_Type;
        if (!cx) {
            cx = PyObject_IsInstance(p, complexfloating);
            if (cx < 0) {
                return NULL;
            }
        }
        if (cx) {
            c = PyObject_CallMethodNoArgs(p, s_conjugate);
            if (c == NULL) {
                return NULL;
            }
        }
    }
    PyObject *g = PyNumber_Multiply(c != NULL ? c : p, b);
    Py_XDECREF(c);
    return g;
}

/* _scalar_backward(entry, b, bars, owned, tape): 0, or -1 with an exception set. */
static int
scalar_backward(PyObject *entry, PyObject *b, PyObject *bars, PyObject *owned,
                PyObject *tape)
{
    PyObject *part = PyTuple_GET_ITEM(entry, 0), *args = PyTuple_GET_ITEM(entry, 1);
    PyObject *y = PyTuple_GET_ITEM(entry, 2), *parents = PyTuple_GET_ITEM(entry, 3);
    if (Py_TYPE(part) != partials_t || !PyTuple_CheckExact(args)
            || !PyList_CheckExact(parents)) {
        return 1;  /* not ours: the Python step */
    }
    PyObject *nargs_o = SLOT(part, off_nargs);
    Py_ssize_t nargs = nargs_o != NULL ? PyLong_AsSsize_t(nargs_o) : -1;
    if (nargs < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "partials without nargs");
        }
        return -1;
    }
    PyObject *wrt = NULL;
    if (SLOT(part, off_uses_wrt) == Py_True) {
        wrt = wrt_of(PyTuple_GET_SIZE(args), parents);
        if (wrt == NULL) {
            return -1;
        }
    }
    PyObject *ps = call_partials(part, args, y, wrt, 0);
    Py_XDECREF(wrt);
    if (ps == NULL) {
        return -1;
    }
    if (ps == FALLBACK) {
        return 1;
    }
    int unit = -2;  /* not computed yet */
    int rc = 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(parents) && rc == 0; k++) {
        PyObject *par = PyList_GET_ITEM(parents, k);
        if (!PyTuple_CheckExact(par) || PyTuple_GET_SIZE(par) < 2) {
            PyErr_SetString(PyExc_TypeError, "a scalar node's parent is not a pair");
            rc = -1;
            break;
        }
        Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(par, 0)) - 1;
        Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(par, 1));
        if (PyErr_Occurred()) {
            rc = -1;
            break;
        }
        if (pos < 0 || pos >= PyTuple_GET_SIZE(args) || j < 0 || j >= PyList_GET_SIZE(bars)) {
            PyErr_SetString(PyExc_IndexError, "a scalar node's parent out of range");
            rc = -1;
            break;
        }
        PyObject *p = nargs > 1 ? PySequence_GetItem(ps, pos) : Py_NewRef(ps);
        if (p == NULL) {
            rc = -1;
            break;
        }
        PyObject *x = PyTuple_GET_ITEM(args, pos);
        PyObject *g = NULL;
        if (PyFloat_CheckExact(p) && PyFloat_AS_DOUBLE(p) == 1.0) {
            if (unit == -2) {
                unit = unit_ok(b);
            }
            if (unit < 0) {
                Py_DECREF(p);
                rc = -1;
                break;
            }
            if (unit) {
                g = Py_NewRef(b);
            }
        }
        if (g == NULL) {
            g = cotangent(p, b);
        }
        Py_DECREF(p);
        if (g == NULL) {
            rc = -1;
            break;
        }
        int proj = needs_projection(x, g);
        if (proj < 0) {
            Py_DECREF(g);
            rc = -1;
            break;
        }
        if (proj) {
            Py_SETREF(g, PyObject_CallFunctionObjArgs(project_plain, x, g, NULL));
            if (g == NULL) {
                rc = -1;
                break;
            }
        }
        PyObject *entry_j = PyList_GetItem(tape, j);
        if (entry_j == NULL) {
            Py_DECREF(g);
            rc = -1;
            break;
        }
        if (PyList_GET_ITEM(bars, j) == Py_None && Py_TYPE(entry_j) != leaf_t) {
            /* the first cotangent of j (not owned: never written into) */
            if (PyList_SetItem(bars, j, g) < 0) {  /* steals g */
                rc = -1;
            }
        }
        else {
            PyObject *jj = PyTuple_GET_ITEM(par, 1);
            PyObject *r = PyObject_CallFunctionObjArgs(accumulate, bars, owned, jj, g, tape,
                                                       NULL);
            Py_DECREF(g);
            if (r == NULL) {
                rc = -1;
            }
            Py_XDECREF(r);
        }
    }
    Py_DECREF(ps);
    return rc;
}

/* A cotangent the Python step would hand to _scalar_backward as it is: a float, an
 * ndarray, or a number of the exact types configured (complex, NumPy's scalars). */
static int
plain_cotangent(PyObject *b)
{
    PyTypeObject *t = Py_TYPE(b);
    if (t == &PyFloat_Type || t == ndarray_t) {
        return 1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(plain_numbers); k++) {
        if ((PyObject *)t == PyTuple_GET_ITEM(plain_numbers, k)) {
            return 1;
        }
    }
    return 0;
}

/* backward(step, bars, owned, tape, start, free=False): ReverseTrace.backward's loop.
 * An entry's cotangent is dropped once pulled back (not an input's: the answer, nor a
 * leaf's: its node's), and with free the entry itself (a tape used once). */
static PyObject *
tape_backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if ((nargs != 5 && nargs != 6) || !PyList_CheckExact(args[1])
            || !PyList_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "backward(step, bars: list, owned, tape: list, start: int, free)");
        return NULL;
    }
    PyObject *step = args[0], *bars = args[1], *owned = args[2], *tape = args[3];
    Py_ssize_t start = PyLong_AsSsize_t(args[4]);
    if (start == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int free_entries = nargs == 6 ? PyObject_IsTrue(args[5]) : 0;
    if (free_entries < 0) {
        return NULL;
    }
    for (Py_ssize_t i = PyList_GET_SIZE(bars) - 1; i >= start; i--) {
        if (i >= PyList_GET_SIZE(bars) || i >= PyList_GET_SIZE(tape)) {
            PyErr_SetString(PyExc_IndexError, "the tape changed during the backward pass");
            return NULL;
        }
        PyObject *b = PyList_GET_ITEM(bars, i);
        if (b == Py_None || PyList_GET_ITEM(tape, i) == input_entry
                || (leaf_t != NULL && Py_TYPE(PyList_GET_ITEM(tape, i)) == leaf_t)) {
            continue;  /* no cotangent, an input (nothing before it), or a leaf */
        }
        Py_INCREF(b);
        PyObject *entry = Py_NewRef(PyList_GET_ITEM(tape, i));
        int rc = 1;
        if (enabled && PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 4
                && plain_cotangent(b)) {
            rc = scalar_backward(entry, b, bars, owned, tape);
        }
        else if (enabled && PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 3) {
            /* x[i]: added into x's cotangent in place, or (False) the Python step */
            PyObject *stack[5] = {entry, b, bars, owned, tape};
            PyObject *r = PyObject_Vectorcall(index_backward, stack, 5, NULL);
            if (r == NULL) {
                rc = -1;
            }
            else {
                rc = r == Py_True ? 0 : 1;
                Py_DECREF(r);
            }
        }
        if (rc > 0) {
            PyObject *stack[5] = {entry, b, bars, owned, tape};
            PyObject *r = PyObject_Vectorcall(step, stack, 5, NULL);
            rc = r == NULL ? -1 : 0;
            Py_XDECREF(r);
        }
        if (rc == 0 && i < PyList_GET_SIZE(bars)) {
            /* pulled back: its cotangent (and with free, the entry) no longer needed */
            if (PyList_SetItem(bars, i, Py_NewRef(Py_None)) < 0) {
                rc = -1;
            }
            else if (free_entries && i < PyList_GET_SIZE(tape)
                     && PyList_SetItem(tape, i, Py_NewRef(Py_None)) < 0) {
                rc = -1;
            }
        }
        Py_DECREF(entry);
        Py_DECREF(b);
        if (rc < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* ---- configuration -------------------------------------------------------------------- */

static int
slot_offset(PyObject *cls, const char *name, Py_ssize_t *off)
{
    PyObject *d = PyObject_GetAttrString(cls, name);
    if (d == NULL) {
        return -1;
    }
    int ok = Py_IS_TYPE(d, &PyMemberDescr_Type);
    if (ok) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        ok = m->type == T_OBJECT_EX || m->type == T_OBJECT;
        *off = m->offset;
    }
    Py_DECREF(d);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%R.%s is not an object slot", cls, name);
        return -1;
    }
    return 0;
}

static int
take_type(PyObject *o, PyTypeObject **dst)
{
    if (!PyType_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a class, got %R", o);
        return -1;
    }
    Py_XSETREF(*dst, (PyTypeObject *)Py_NewRef(o));
    return 0;
}

static void
take(PyObject *o, PyObject **dst)
{
    Py_XSETREF(*dst, o == Py_None ? NULL : Py_NewRef(o));
}

static PyObject *
configure(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {
        "tracer", "reverse_trace", "ndarray", "partials", "leaf", "ufunc", "npfunc",
        "fast_cache", "fill", "boxable", "inplace_ids", "project_plain", "accumulate",
        "namespace_of", "numpy", "complexfloating", "errstate_var", "ignore_all",
        "index_backward", "index_fact", "plain_numbers", "input_entry", NULL};
    PyObject *o[22];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOOO!OOO!OOOOOOOOOO!O:configure", names,
                                     &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                                     &PyDict_Type, &o[7], &o[8], &o[9], &PyDict_Type,
                                     &o[10], &o[11], &o[12], &o[13], &o[14], &o[15],
                                     &o[16], &o[17], &o[18], &o[19], &PyTuple_Type,
                                     &o[20], &o[21])) {
        return NULL;
    }
    enabled = 0;
    for (int i = 0; i < 7; i++) {
        if (!PyType_Check(o[i])) {
            PyErr_Format(PyExc_TypeError, "configure: %s must be a class", names[i]);
            return NULL;
        }
    }
    if (slot_offset(o[0], "primal", &off_primal) < 0
            || slot_offset(o[0], "_trace", &off_trace) < 0
            || slot_offset(o[0], "aux", &off_aux) < 0
            || slot_offset(o[1], "tape", &off_tape) < 0
            || slot_offset(o[1], "ctype", &off_ctype) < 0
            || slot_offset(o[1], "config", &off_config) < 0
            || slot_offset(o[3], "raw", &off_raw) < 0
            || slot_offset(o[3], "fn", &off_fn) < 0
            || slot_offset(o[3], "nargs", &off_nargs) < 0
            || slot_offset(o[3], "quiet", &off_quiet) < 0
            || slot_offset(o[3], "uses_output", &off_uses_output) < 0
            || slot_offset(o[3], "uses_xp", &off_uses_xp) < 0
            || slot_offset(o[3], "uses_wrt", &off_uses_wrt) < 0) {
        return NULL;
    }
    if (take_type(o[0], &tracer_t) < 0 || take_type(o[1], &rtrace_t) < 0
            || take_type(o[2], &ndarray_t) < 0 || take_type(o[3], &partials_t) < 0
            || take_type(o[4], &leaf_t) < 0 || take_type(o[5], &ufunc_t) < 0
            || take_type(o[6], &npfunc_t) < 0) {
        return NULL;
    }
    take(o[7], &fast_cache);
    take(o[8], &fill);
    take(o[9], &boxable);
    take(o[10], &inplace_ids);
    take(o[11], &project_plain);
    take(o[12], &accumulate);
    take(o[13], &namespace_of);
    take(o[14], &np_module);
    take(o[15], &complexfloating);
    take(o[16], &errstate_var);
    take(o[17], &ignore_all);
    take(o[18], &index_backward);
    take(o[19], &index_fact);
    take(o[20], &plain_numbers);
    take(o[21], &input_entry);
    if (errstate_var != NULL && (ignore_all == NULL || !PyContextVar_CheckExact(errstate_var))) {
        Py_CLEAR(errstate_var);
    }
    enabled = 1;
    Py_RETURN_NONE;
}

static PyObject *
configure_forward(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"forward_trace", "fast_cache", "fill", NULL};
    PyObject *o[3];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O:configure_forward", names, &o[0],
                                     &PyDict_Type, &o[1], &o[2])) {
        return NULL;
    }
    forward = 0;
    if (tracer_t == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure the reverse trace first");
        return NULL;
    }
    if (!PyType_Check(o[0])) {
        PyErr_SetString(PyExc_TypeError, "configure_forward: forward_trace must be a class");
        return NULL;
    }
    if (slot_offset(o[0], "ctype", &off_fctype) < 0
            || slot_offset(o[0], "config", &off_fconfig) < 0
            || take_type(o[0], &ftrace_t) < 0) {
        return NULL;
    }
    take(o[1], &ffast_cache);
    take(o[2], &ffill);
    forward = 1;
    Py_RETURN_NONE;
}

static PyObject *
set_slim(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "set_slim(parts: dict, slim: callable, min_bytes: int)");
        return NULL;
    }
    Py_ssize_t min_bytes = PyLong_AsSsize_t(args[2]);
    if (min_bytes == -1 && PyErr_Occurred()) {
        return NULL;
    }
    slim_min = min_bytes;
    Py_XSETREF(slim_parts, Py_NewRef(args[0]));
    Py_XSETREF(slim_fn, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

static PyObject *
set_enabled(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0) {
        return NULL;
    }
    if (on && tracer_t == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the C tape is not configured");
        return NULL;
    }
    int was = enabled;
    enabled = on;
    return PyBool_FromLong(was);
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "configure(**objects): the classes and functions of chainrules.ad the fast paths "
     "use; switches them on."},
    {"configure_forward", (PyCFunction)(void (*)(void))configure_forward,
     METH_VARARGS | METH_KEYWORDS,
     "configure_forward(forward_trace=, fast_cache=, fill=): forward mode's class and "
     "lookup cache; its fast path then runs wherever the reverse trace's are on."},
    {"set_enabled", set_enabled, METH_O,
     "set_enabled(flag) -> the previous setting: the fast paths on or off (off: every "
     "call goes to the Python code)."},
    {"backward", (PyCFunction)(void (*)(void))tape_backward, METH_FASTCALL,
     "backward(step, bars, owned, tape, start, free=False): ReverseTrace.backward's loop; "
     "scalar tuples with plain cotangents here, every other entry through step(entry, b, "
     "bars, owned, tape); cotangents (and with free, entries) dropped once pulled back."},
    {"set_slim", (PyCFunction)(void (*)(void))set_slim, METH_FASTCALL,
     "set_slim(parts, slim, min_bytes): the recorded scalar calls whose partials skip a value "
     "(_memory.SLIM) and the function giving what the tape keeps of them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef tape_module = {
    PyModuleDef_HEAD_INIT,
    "chainrules.ad._tape",
    "The reverse trace's fast paths in C (see _tape.c); the Python code is the reference.",
    -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__tape(void)
{
    if (PyType_Ready(&DispatchType) < 0 || PyType_Ready(&OpMethodType) < 0
            || PyType_Ready(&IndexType) < 0) {
        return NULL;
    }
    PyObject *operator_module = PyImport_ImportModule("operator");
    if (operator_module == NULL) {
        return NULL;
    }
    getitem = PyObject_GetAttrString(operator_module, "getitem");
    Py_DECREF(operator_module);
    if (getitem == NULL) {
        return NULL;
    }
    Py_SET_TYPE(&fallback_marker, &PyBaseObject_Type);
    Py_SET_REFCNT(&fallback_marker, 1);
    one = PyLong_FromLong(1);
    two = PyLong_FromLong(2);
    s_dtype = PyUnicode_InternFromString("dtype");
    s_kind = PyUnicode_InternFromString("kind");
    s_shape = PyUnicode_InternFromString("shape");
    s_conj = PyUnicode_InternFromString("conj");
    s_conjugate = PyUnicode_InternFromString("conjugate");
    s_ndim = PyUnicode_InternFromString("ndim");
    s_nbytes = PyUnicode_InternFromString("nbytes");
    if (s_nbytes == NULL) {
        return NULL;
    }
    kw_y = Py_BuildValue("(s)", "y");
    kw_xp = Py_BuildValue("(s)", "xp");
    kw_y_xp = Py_BuildValue("(ss)", "y", "xp");
    s_y = PyUnicode_InternFromString("y");
    s_xp = PyUnicode_InternFromString("xp");
    s_wrt = PyUnicode_InternFromString("wrt");
    if (s_y == NULL || s_xp == NULL || s_wrt == NULL) {
        return NULL;
    }
    if (one == NULL || two == NULL || s_dtype == NULL || s_kind == NULL || s_shape == NULL
            || s_conj == NULL || s_conjugate == NULL || s_ndim == NULL || kw_y == NULL
            || kw_xp == NULL || kw_y_xp == NULL) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&tape_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Dispatch", (PyObject *)&DispatchType) < 0
            || PyModule_AddObjectRef(m, "OpMethod", (PyObject *)&OpMethodType) < 0
            || PyModule_AddObjectRef(m, "Index", (PyObject *)&IndexType) < 0
            || PyModule_AddObjectRef(m, "FREES", Py_True) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
