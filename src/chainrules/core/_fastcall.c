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
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

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
            res = PyObject_Vectorcall(hit, args + 1, (size_t)nprimal, kwnames);
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
    if (PyType_Ready(&EntryType) < 0) {
        return NULL;
    }
    return PyModule_Create(&fastcall_module);
}
