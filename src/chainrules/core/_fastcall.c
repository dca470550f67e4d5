/* The fast path of rrule(f, x[, y], **kw) and frule(dargs, f, x[, y], **kw), in C.
 *
 * Optional: chainrules/core/_rules.py defines rrule and frule in Python and, when this
 * extension is built, puts an Entry in front of each. An Entry answers the common
 * calls from the rule tables' own caches without a Python frame:
 *
 *   - f has rules and the call has one or two primal arguments: look up
 *     fast[f][type(x)] (or [(type(x), type(y))]); a rule is called with the same
 *     arguments minus f, a cached miss (the no_rule marker) answers None;
 *   - f has no rules and its type is known to have none (no_table): None.
 *
 * Everything else (a first call, configs, three or more arguments, unhashable
 * callables) goes to the Python entry point unchanged, which fills the caches. The
 * caches are the Python tables' own dicts and set, so there is one source of truth.
 *
 * The boundary checks of chainrules/core/_validate.py, in C: the caches hold Checked
 * objects (a rule wrapped to check its tangents), and an rrule's pullback comes back as
 * a CheckedPullback, which checks y_bar against y when it is called. The common cases
 * (a tangent type that always passes, Python numbers, NumPy arrays of the same shape)
 * are decided here; every other pair goes to _validate.tangent_mismatch, and every
 * refusal is raised by the Python code, so messages are the same on both paths.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <structmember.h>

static PyTypeObject CheckedType;
static PyTypeObject CheckedPullbackType;
static PyObject *checked_vectorcall(PyObject *, PyObject *const *, size_t, PyObject *);
static PyObject *wrap_result(PyObject *f, PyObject *res);

typedef struct {
    PyObject_HEAD
    PyObject *slow;         /* the Python entry point */
    PyObject *fast;         /* dict: callable -> dict(type | (type, type) -> rule) */
    PyObject *no_table;     /* set: types whose instances have no rules */
    PyObject *no_rule;      /* the marker the fast dicts store for a cached miss */
    PyObject *config_class; /* frule(config, dargs, f, ...) is never answered here */
    PyObject *dict;         /* __dict__: register, table, __doc__, __wrapped__, ... */
    Py_ssize_t lead;        /* 0 for rrule(f, ...), 1 for frule(dargs, f, ...) */
    vectorcallfunc vectorcall;
} Entry;

#define MAX_FORWARDED 16

/* A Checked rrule's work without the call through its vectorcall slot. */
typedef struct {
    PyObject_HEAD
    PyObject *rule;
    PyObject *f;
    Py_ssize_t lead;  /* 0: rrule, 1: frule */
    vectorcallfunc vectorcall;
} Checked;

static inline PyObject *
checked_rrule_call(PyObject *hit, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (Py_TYPE(hit) == &CheckedType) {
        Checked *c = (Checked *)hit;
        return wrap_result(c->f, PyObject_Vectorcall(c->rule, args, nargsf, kwnames));
    }
    return PyObject_Vectorcall(hit, args, nargsf, kwnames);
}

static PyObject *
entry_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Entry *self = (Entry *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t lead = self->lead;
    Py_ssize_t nprimal = nargs - lead - 1;
    if (nprimal == 1 || nprimal == 2) {
        PyObject *f = args[lead];
        PyObject *tab = PyDict_GetItemWithError(self->fast, f);  /* borrowed */
        if (tab == NULL) {
            if (PyErr_Occurred()) {  /* an unhashable callable */
                PyErr_Clear();
                goto slow;
            }
            int known = PySet_Contains(self->no_table, (PyObject *)Py_TYPE(f));
            if (known < 0) {
                PyErr_Clear();
                goto slow;
            }
            if (!known) {
                goto slow;
            }
            if (lead && !PyTuple_CheckExact(args[0])) {  /* a tuple is no config */
                int is_config = PyObject_IsInstance(args[0], self->config_class);
                if (is_config != 0) {
                    if (is_config < 0) {
                        PyErr_Clear();
                    }
                    goto slow;
                }
            }
            Py_RETURN_NONE;  /* nothing registered for f or its type */
        }
        PyObject *hit;
        PyObject *x_type = (PyObject *)Py_TYPE(args[lead + 1]);
        if (nprimal == 1) {
            hit = PyDict_GetItemWithError(tab, x_type);
        }
        else {
            PyObject *key = PyTuple_Pack(2, x_type, (PyObject *)Py_TYPE(args[lead + 2]));
            if (key == NULL) {
                return NULL;
            }
            hit = PyDict_GetItemWithError(tab, key);
            Py_DECREF(key);
        }
        if (hit == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            goto slow;  /* not cached yet: the Python entry point looks it up */
        }
        if (hit == self->no_rule) {
            Py_RETURN_NONE;
        }
        Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
        PyObject *res;
        Py_INCREF(hit);  /* the rule may change the tables while it runs */
        if (lead == 0) {
            /* rule(x[, y], **kw): the same vector without f (keyword values follow) */
            res = checked_rrule_call(hit, args + 1, (size_t)nprimal, kwnames);
        }
        else {
            /* rule(dargs, x[, y], **kw): drop f from the middle */
            PyObject *forwarded[MAX_FORWARDED];
            Py_ssize_t total = 1 + nprimal + nkw;
            if (total > MAX_FORWARDED) {
                Py_DECREF(hit);
                goto slow;
            }
            forwarded[0] = args[0];
            for (Py_ssize_t i = 0; i < nprimal + nkw; i++) {
                forwarded[1 + i] = args[2 + i];
            }
            res = PyObject_Vectorcall(hit, forwarded, (size_t)(1 + nprimal), kwnames);
        }
        Py_DECREF(hit);
        return res;
    }
slow:
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static int
entry_traverse(PyObject *op, visitproc visit, void *arg)
{
    Entry *self = (Entry *)op;
    Py_VISIT(self->slow);
    Py_VISIT(self->fast);
    Py_VISIT(self->no_table);
    Py_VISIT(self->no_rule);
    Py_VISIT(self->config_class);
    Py_VISIT(self->dict);
    return 0;
}

static int
entry_clear(PyObject *op)
{
    Entry *self = (Entry *)op;
    Py_CLEAR(self->slow);
    Py_CLEAR(self->fast);
    Py_CLEAR(self->no_table);
    Py_CLEAR(self->no_rule);
    Py_CLEAR(self->config_class);
    Py_CLEAR(self->dict);
    return 0;
}

static void
entry_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    entry_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
entry_repr(PyObject *op)
{
    Entry *self = (Entry *)op;
    return PyUnicode_FromFormat("<chainrules entry point %R (C fast path)>", self->slow);
}

static PyObject *
entry_reduce(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    /* pickled by reference, like the function it stands for */
    return PyObject_GetAttrString(op, "__qualname__");
}

static PyMethodDef entry_methods[] = {
    {"__reduce__", entry_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef entry_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainrules.core._fastcall.Entry",
    .tp_doc = "A rule entry point: the C fast path in front of rrule or frule.",
    .tp_basicsize = sizeof(Entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_dictoffset = offsetof(Entry, dict),
    .tp_traverse = entry_traverse,
    .tp_clear = entry_clear,
    .tp_dealloc = entry_dealloc,
    .tp_repr = entry_repr,
    .tp_methods = entry_methods,
    .tp_getset = entry_getset,
};

/* ------------------------------------------------------------------------------------
 * Boundary checks (configured once by chainrules/core/_validate.py)
 */

#define N_PASS 5
static PyTypeObject *pass_types[N_PASS];  /* tangents every primal accepts */
static PyTypeObject *ndarray_type;
static int array_layout_ok;               /* the mirror below matched real arrays */
static PyObject *py_mismatch;             /* tangent_mismatch(x, dx) -> None | reason */
static PyObject *py_raise_output;         /* raise_output(f, pullback, reason): raises */
static PyObject *py_check_dargs;          /* check_dargs_fit(f, rule, dargs, args) */

/* The leading fields of NumPy's PyArrayObject_fields and PyArray_Descr, which NumPy
 * keeps ABI-stable (the same in 1.x and 2.x). NumPy's headers are not needed to build
 * this file: configure() checks the mirror against real arrays first, and arrays take
 * the Python path when it does not match. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
} MirrorArray;

typedef struct {
    PyObject_HEAD
    PyTypeObject *typeobj;
    char kind;
} MirrorDescr;

/* 1: dx is a tangent of x for sure; 0: ask tangent_mismatch (it may still be). */
static inline int
fits_fast(PyObject *x, PyObject *dx)
{
    PyTypeObject *tdx = Py_TYPE(dx);
    PyTypeObject *tx = Py_TYPE(x);
    for (int i = 0; i < N_PASS; i++) {
        if (tdx == pass_types[i]) {
            return 1;
        }
    }
    if (tx == &PyFloat_Type || tx == &PyLong_Type) {
        return tdx == &PyFloat_Type || tdx == &PyLong_Type;
    }
    if (tx == &PyComplex_Type) {
        return tdx == &PyComplex_Type || tdx == &PyFloat_Type || tdx == &PyLong_Type;
    }
    if (tx == ndarray_type && tdx == ndarray_type && array_layout_ok) {
        MirrorArray *a = (MirrorArray *)x;
        MirrorArray *b = (MirrorArray *)dx;
        if (a->nd != b->nd) {
            return 0;
        }
        for (int k = 0; k < a->nd; k++) {
            if (a->dimensions[k] != b->dimensions[k]) {
                return 0;
            }
        }
        /* a complex tangent of a real array is refused (by the Python path) */
        return ((MirrorDescr *)b->descr)->kind != 'c'
               || ((MirrorDescr *)a->descr)->kind == 'c';
    }
    return 0;
}

/* 0 when dx fits x, -1 with the InvalidTangentError raised for the output. */
static int
check_output(PyObject *f, PyObject *pullback, PyObject *y, PyObject *y_bar)
{
    if (fits_fast(y, y_bar)) {
        return 0;
    }
    PyObject *bad = PyObject_CallFunctionObjArgs(py_mismatch, y, y_bar, NULL);
    if (bad == NULL) {
        return -1;
    }
    if (bad == Py_None) {
        Py_DECREF(bad);
        return 0;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(py_raise_output, f, pullback, bad, NULL);
    Py_DECREF(bad);
    if (r != NULL) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_SystemError, "raise_output returned instead of raising");
    }
    return -1;
}

/* --- CheckedPullback: the rule's pullback, checking y_bar first ------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *f;
    PyObject *y;
    PyObject *pullback;
    vectorcallfunc vectorcall;
} CheckedPullback;

static PyObject *
pullback_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CheckedPullback *self = (CheckedPullback *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (!(nargs == 1 && nkw == 0)
        && !(nargs == 0 && nkw == 1
             && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "y_bar") == 0)) {
        PyErr_Format(PyExc_TypeError,
                     "a pullback takes one argument, the cotangent y_bar (got %zd "
                     "positional and %zd keyword arguments)", nargs, nkw);
        return NULL;
    }
    PyObject *y_bar = args[0];
    if (check_output(self->f, self->pullback, self->y, y_bar) < 0) {
        return NULL;
    }
    return PyObject_Vectorcall(self->pullback, &y_bar, 1, NULL);
}

static int
pullback_traverse(PyObject *op, visitproc visit, void *arg)
{
    CheckedPullback *self = (CheckedPullback *)op;
    Py_VISIT(self->f);
    Py_VISIT(self->y);
    Py_VISIT(self->pullback);
    return 0;
}

static int
pullback_clear(PyObject *op)
{
    CheckedPullback *self = (CheckedPullback *)op;
    Py_CLEAR(self->f);
    Py_CLEAR(self->y);
    Py_CLEAR(self->pullback);
    return 0;
}

/* Every cached rrule hit makes one CheckedPullback and most die young: keep a few
 * freed ones (their references cleared) to skip the allocator. */
#define PULLBACK_FREELIST 32
static PyObject *pullback_freelist[PULLBACK_FREELIST];
static int pullback_nfree;

static void
pullback_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    pullback_clear(op);
    if (pullback_nfree < PULLBACK_FREELIST && Py_TYPE(op) == &CheckedPullbackType) {
        pullback_freelist[pullback_nfree++] = op;
        return;
    }
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
pullback_repr(PyObject *op)
{
    return PyUnicode_FromFormat("<checked pullback of %R>", ((CheckedPullback *)op)->pullback);
}

static PyObject *
pullback_get_name(PyObject *op, void *closure)
{
    /* __name__ / __qualname__ of the rule's own pullback, for tracebacks and messages */
    return PyObject_GetAttrString(((CheckedPullback *)op)->pullback, (const char *)closure);
}

static PyMemberDef pullback_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(CheckedPullback, pullback), READONLY,
     "the rule's own pullback"},
    {"y", T_OBJECT, offsetof(CheckedPullback, y), READONLY, "the primal output"},
    {"f", T_OBJECT, offsetof(CheckedPullback, f), READONLY, "the function of the rule"},
    {NULL, 0, 0, 0, NULL},
};

static PyObject *
pullback_copy(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    /* copied as the function it stands for is: not at all */
    return Py_NewRef(op);
}

static PyMethodDef pullback_methods[] = {
    {"__copy__", pullback_copy, METH_NOARGS, NULL},
    {"__deepcopy__", pullback_copy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pullback_getset[] = {
    {"__name__", pullback_get_name, NULL, NULL, "__name__"},
    {"__qualname__", pullback_get_name, NULL, NULL, "__qualname__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CheckedPullbackType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainrules.core._fastcall.CheckedPullback",
    .tp_doc = "An rrule's pullback that refuses a cotangent y_bar which cannot belong to "
              "the output y before the rule's own pullback (__wrapped__) sees it.",
    .tp_basicsize = sizeof(CheckedPullback),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(CheckedPullback, vectorcall),
    .tp_traverse = pullback_traverse,
    .tp_clear = pullback_clear,
    .tp_dealloc = pullback_dealloc,
    .tp_repr = pullback_repr,
    .tp_members = pullback_members,
    .tp_methods = pullback_methods,
    .tp_getset = pullback_getset,
};

/* An rrule's result with its pullback wrapped; steals the reference to res. */
static PyObject *
wrap_result(PyObject *f, PyObject *res)
{
    if (res == NULL || !PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 2) {
        return res;
    }
    PyObject *y = PyTuple_GET_ITEM(res, 0);
    PyObject *pullback = PyTuple_GET_ITEM(res, 1);
    if (!PyCallable_Check(pullback)) {
        return res;  /* malformed; debug mode says so */
    }
    CheckedPullback *cp;
    if (pullback_nfree > 0) {
        /* a new reference to an untracked, cleared object, as PyObject_GC_New gives */
        cp = (CheckedPullback *)PyObject_Init(pullback_freelist[--pullback_nfree],
                                              &CheckedPullbackType);
    }
    else {
        cp = PyObject_GC_New(CheckedPullback, &CheckedPullbackType);
        if (cp == NULL) {
            Py_DECREF(res);
            return NULL;
        }
    }
    cp->f = Py_NewRef(f);
    cp->y = Py_NewRef(y);
    cp->pullback = Py_NewRef(pullback);
    cp->vectorcall = pullback_vectorcall;
    PyObject_GC_Track((PyObject *)cp);
    if (Py_REFCNT(res) == 1) {
        /* The rule's own new tuple, which nothing else can see: put the wrapper in it
         * instead of building a second tuple (half of what wrapping costs a hit). */
        PyTuple_SET_ITEM(res, 1, (PyObject *)cp);
        Py_DECREF(pullback);  /* cp holds it now */
        if (!PyObject_GC_IsTracked(res)) {
            PyObject_GC_Track(res);  /* the collector may untrack a tuple of atoms */
        }
        return res;
    }
    PyObject *out = PyTuple_Pack(2, y, (PyObject *)cp);
    Py_DECREF(cp);
    Py_DECREF(res);
    return out;
}

/* --- Checked: a rule checking its tangents (frule) or wrapping its pullback (rrule) -- */

static PyObject *
checked_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Checked *self = (Checked *)op;
    if (self->lead == 0) {
        return wrap_result(self->f, PyObject_Vectorcall(self->rule, args, nargsf, kwnames));
    }
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1) {
        PyObject *dargs = args[0];
        int ok = PyTuple_CheckExact(dargs) && PyTuple_GET_SIZE(dargs) == nargs;
        for (Py_ssize_t i = 1; ok && i < nargs; i++) {
            ok = fits_fast(args[i], PyTuple_GET_ITEM(dargs, i));
        }
        if (!ok) {
            /* the thorough check, in Python: raises unless the tangents fit after all */
            PyObject *primals = PyTuple_New(nargs - 1);
            if (primals == NULL) {
                return NULL;
            }
            for (Py_ssize_t i = 1; i < nargs; i++) {
                PyTuple_SET_ITEM(primals, i - 1, Py_NewRef(args[i]));
            }
            PyObject *r = PyObject_CallFunctionObjArgs(py_check_dargs, self->f, self->rule,
                                                       dargs, primals, NULL);
            Py_DECREF(primals);
            if (r == NULL) {
                return NULL;
            }
            Py_DECREF(r);
        }
    }
    return PyObject_Vectorcall(self->rule, args, nargsf, kwnames);
}

static int
checked_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(((Checked *)op)->rule);
    Py_VISIT(((Checked *)op)->f);
    return 0;
}

static int
checked_clear(PyObject *op)
{
    Py_CLEAR(((Checked *)op)->rule);
    Py_CLEAR(((Checked *)op)->f);
    return 0;
}

static void
checked_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    checked_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
checked_repr(PyObject *op)
{
    Checked *self = (Checked *)op;
    return PyUnicode_FromFormat("<checked %s %R>", self->lead ? "frule" : "rrule", self->rule);
}

static PyObject *
checked_is_checked(PyObject *op, void *closure)
{
    Py_RETURN_TRUE;
}

static PyMemberDef checked_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(Checked, rule), READONLY, "the rule itself"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef checked_getset[] = {
    {"_chainrules_checked", checked_is_checked, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CheckedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainrules.core._fastcall.Checked",
    .tp_doc = "A rule (__wrapped__) whose tangents are checked: an frule's before it runs, "
              "an rrule's cotangent when its pullback is called.",
    .tp_basicsize = sizeof(Checked),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Checked, vectorcall),
    .tp_traverse = checked_traverse,
    .tp_clear = checked_clear,
    .tp_dealloc = checked_dealloc,
    .tp_repr = checked_repr,
    .tp_members = checked_members,
    .tp_getset = checked_getset,
};

static int configured;

static PyObject *
make_checked(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *rule, *f;
    Py_ssize_t lead;
    if (!PyArg_ParseTuple(args, "OOn:checked", &rule, &f, &lead)) {
        return NULL;
    }
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "checked: configure() was not called");
        return NULL;
    }
    if (lead != 0 && lead != 1) {
        PyErr_SetString(PyExc_ValueError, "checked: lead must be 0 (rrule) or 1 (frule)");
        return NULL;
    }
    Checked *self = PyObject_GC_New(Checked, &CheckedType);
    if (self == NULL) {
        return NULL;
    }
    self->rule = Py_NewRef(rule);
    self->f = Py_NewRef(f);
    self->lead = lead;
    self->vectorcall = checked_vectorcall;
    PyObject_GC_Track((PyObject *)self);
    return (PyObject *)self;
}

static PyObject *
checked_result(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *f, *res;
    if (!PyArg_ParseTuple(args, "OO:checked_result", &f, &res)) {
        return NULL;
    }
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "checked_result: configure() was not called");
        return NULL;
    }
    return wrap_result(f, Py_NewRef(res));
}

/* Whether the mirror structs read this array as NumPy does. */
static int
mirror_matches(PyObject *sample)
{
    /* sample: (array, shape tuple, dtype, kind) */
    PyObject *arr, *shape, *dtype;
    int kind;
    if (!PyArg_ParseTuple(sample, "OO!OC", &arr, &PyTuple_Type, &shape, &dtype, &kind)) {
        return -1;
    }
    if (Py_TYPE(arr) != ndarray_type) {
        return 0;
    }
    MirrorArray *a = (MirrorArray *)arr;
    if (a->nd != PyTuple_GET_SIZE(shape) || a->descr != dtype) {
        return 0;
    }
    for (int k = 0; k < a->nd; k++) {
        Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
        if (d == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (a->dimensions[k] != d) {
            return 0;
        }
    }
    return ((MirrorDescr *)dtype)->kind == (char)kind;
}

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *passes, *ndarray, *samples, *mismatch, *raise_output, *check_dargs, *call;
    if (!PyArg_ParseTuple(args, "O!O!O!OOOO:configure", &PyTuple_Type, &passes, &PyType_Type,
                          &ndarray, &PyTuple_Type, &samples, &mismatch, &raise_output,
                          &check_dargs, &call)) {
        return NULL;
    }
    /* CheckedPullback.__call__ in Python: the same check and call as the C slot, which
     * calls still take. Code that reads the class instead of calling it (the reference
     * AD tracing a pullback for a higher-order derivative) then finds Python code it can
     * follow into the rule's own pullback; a slot wrapper would be opaque to it. The
     * dict is written directly, so the tp_call slot stays the C one. */
    if (PyDict_SetItemString(CheckedPullbackType.tp_dict, "__call__", call) < 0) {
        return NULL;
    }
    PyType_Modified(&CheckedPullbackType);
    if (PyTuple_GET_SIZE(passes) != N_PASS) {
        PyErr_Format(PyExc_ValueError, "configure: %d pass types expected", N_PASS);
        return NULL;
    }
    for (int i = 0; i < N_PASS; i++) {
        PyObject *t = PyTuple_GET_ITEM(passes, i);
        if (!PyType_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "configure: pass types must be types");
            return NULL;
        }
        Py_XSETREF(pass_types[i], (PyTypeObject *)Py_NewRef(t));
    }
    Py_XSETREF(ndarray_type, (PyTypeObject *)Py_NewRef(ndarray));
    int ok = PyTuple_GET_SIZE(samples) > 0;
    for (Py_ssize_t i = 0; ok && i < PyTuple_GET_SIZE(samples); i++) {
        ok = mirror_matches(PyTuple_GET_ITEM(samples, i));
        if (ok < 0) {
            return NULL;
        }
    }
    array_layout_ok = ok;
    Py_XSETREF(py_mismatch, Py_NewRef(mismatch));
    Py_XSETREF(py_raise_output, Py_NewRef(raise_output));
    Py_XSETREF(py_check_dargs, Py_NewRef(check_dargs));
    configured = 1;
    return PyBool_FromLong(array_layout_ok);
}

static PyObject *
make_entry(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *slow, *fast, *no_table, *no_rule, *config_class;
    Py_ssize_t lead;
    if (!PyArg_ParseTuple(args, "OO!O!OOn:entry", &slow, &PyDict_Type, &fast,
                          &PySet_Type, &no_table, &no_rule, &config_class, &lead)) {
        return NULL;
    }
    if (lead != 0 && lead != 1) {
        PyErr_SetString(PyExc_ValueError, "entry: lead must be 0 (rrule) or 1 (frule)");
        return NULL;
    }
    Entry *self = PyObject_GC_New(Entry, &EntryType);
    if (self == NULL) {
        return NULL;
    }
    self->slow = Py_NewRef(slow);
    self->fast = Py_NewRef(fast);
    self->no_table = Py_NewRef(no_table);
    self->no_rule = Py_NewRef(no_rule);
    self->config_class = Py_NewRef(config_class);
    self->dict = NULL;
    self->lead = lead;
    self->vectorcall = entry_vectorcall;
    PyObject_GC_Track((PyObject *)self);
    return (PyObject *)self;
}

static PyMethodDef module_methods[] = {
    {"entry", make_entry, METH_VARARGS,
     "entry(slow, fast, no_table, no_rule, config_class, lead) -> Entry"},
    {"checked", make_checked, METH_VARARGS,
     "checked(rule, f, lead) -> Checked: the rule checking its tangents"},
    {"checked_result", checked_result, METH_VARARGS,
     "checked_result(f, result) -> result with a CheckedPullback"},
    {"configure", configure, METH_VARARGS,
     "configure(pass_types, ndarray, samples, tangent_mismatch, raise_output, "
     "check_dargs_fit, pullback_call) -> whether NumPy arrays are checked in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fastcall_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "chainrules.core._fastcall",
    .m_doc = "The C fast path of chainrules.rrule and chainrules.frule (optional).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__fastcall(void)
{
    if (PyType_Ready(&EntryType) < 0 || PyType_Ready(&CheckedType) < 0
        || PyType_Ready(&CheckedPullbackType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&fastcall_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "CheckedPullback", (PyObject *)&CheckedPullbackType) < 0
        || PyModule_AddObjectRef(m, "Checked", (PyObject *)&CheckedType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
