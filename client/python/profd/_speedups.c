// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profd._speedups: the step scope of profd.Client (`with c.step(n)`,
 * c.step_begin(n), c.step_end(n)) in C, for the Python hot path.
 *
 * Optional: the package works the same through ctypes without it (client.py
 * decides, _native.speedups() says why not). It does not link libprofd: the
 * step calls are the addresses of profd_step_begin/profd_step_end in the
 * library ctypes already loaded, and the client handle, passed in when a
 * Client opens. So the extension moves with the package, needs no RUNPATH,
 * and always calls the library the package loaded.
 *
 * Only the common case runs here: an int that fits int64_t, on an open
 * client. It makes the same call as the ctypes path, with the GIL held (as
 * ctypes.PyDLL does), then checks client.py's _interrupted flag as that path
 * does. Every other value (bool, float, an int subclass, an int ctypes would
 * truncate) and every call after close goes to the ctypes scope (`slow`), so
 * the behaviour is that of the ctypes path in every case.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "profd/client.h"

/* the type of profd_step_begin and profd_step_end (client.h) */
typedef int (*step_fn)(profd_client_t *c, int64_t step);

/* What client.py checks against: raise it there when they differ. */
#define SPEEDUPS_ABI 1

typedef struct {
    PyObject_HEAD PyObject *step; /* the step of the next __enter__ and __exit__ */
    PyObject *slow;               /* client._StepScope: the ctypes path */
    PyObject *globals;            /* client.py's module globals: _interrupted, _reraise */
    PyObject *bound[2];           /* __enter__ and __exit__ bound to this scope */
    profd_client_t *h;            /* NULL once disabled (closed, forked) */
    step_fn begin, end;           /* NULL once disabled */
} Scope;

static PyObject *s_interrupted, *s_reraise, *s_step, *s_enter, *s_exit, *s_disable;

/* client.py: `if _interrupted: _reraise()`. A KeyboardInterrupt from a
 * backend that ran inside the call (it cannot cross the C frames). */
static int check_interrupted(Scope *s)
{
    PyObject *flag = PyDict_GetItemWithError(s->globals, s_interrupted);
    if (flag == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (flag == Py_False) {
        return 0;
    }
    int t = PyObject_IsTrue(flag);
    if (t <= 0) {
        return t;
    }
    PyObject *fn = PyDict_GetItemWithError(s->globals, s_reraise);
    if (fn == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        return -1;
    }
    PyObject *r = PyObject_CallNoArgs(fn);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* The ctypes scope with step n: its __enter__ or __exit__(None, None, None). */
static int call_slow(Scope *s, PyObject *n, int end)
{
    if (PyObject_SetAttr(s->slow, s_step, n) < 0) {
        return -1;
    }
    PyObject *r;
    if (end) {
        r = PyObject_CallMethodObjArgs(s->slow, s_exit, Py_None, Py_None, Py_None, NULL);
    } else {
        r = PyObject_CallMethodNoArgs(s->slow, s_enter);
    }
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* profd_step_begin (end 0) or profd_step_end (end 1) with step n. */
static int call_step(Scope *s, PyObject *n, int end)
{
    if (n == NULL) { /* `del scope.step`: as the ctypes scope would say */
        PyErr_SetString(PyExc_AttributeError, "'StepScope' object has no attribute 'step'");
        return -1;
    }
    step_fn fn = end ? s->end : s->begin;
    if (fn != NULL && PyLong_CheckExact(n)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
        if (!overflow) {
            /* n stays alive through the call: a backend may run inside it */
            Py_INCREF(n);
            fn(s->h, (int64_t)v);
            Py_DECREF(n);
            if (PyErr_Occurred()) { /* as ctypes.PyDLL: an error left set is raised */
                return -1;
            }
            return check_interrupted(s);
        }
    }
    return call_slow(s, n, end);
}

static PyObject *scope_enter(PyObject *self, PyObject *unused)
{
    Scope *s = (Scope *)self;
    if (call_step(s, s->step, 0) < 0) {
        return NULL;
    }
    Py_INCREF(self);
    return self;
}

static PyObject *scope_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Scope *s = (Scope *)self;
    if (call_step(s, s->step, 1) < 0) {
        return NULL;
    }
    Py_RETURN_FALSE;
}

/* __enter__ and __exit__, bound once per scope (scope_new) */
static PyMethodDef slot_defs[2] = {
    {"__enter__", scope_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))scope_exit, METH_FASTCALL, NULL},
};

/* c.step(n): the scope with step n */
static PyObject *scope_set(PyObject *self, PyObject *n)
{
    Scope *s = (Scope *)self;
    Py_INCREF(n);
    Py_SETREF(s->step, n);
    Py_INCREF(self);
    return self;
}

static PyObject *scope_begin(PyObject *self, PyObject *n)
{
    if (call_step((Scope *)self, n, 0) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *scope_end(PyObject *self, PyObject *n)
{
    if (call_step((Scope *)self, n, 1) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *scope_disable(PyObject *self, PyObject *unused)
{
    Scope *s = (Scope *)self;
    s->h = NULL;
    s->begin = s->end = NULL;
    return PyObject_CallMethodNoArgs(s->slow, s_disable);
}

/* The objects a Scope holds references to (the garbage collector's view). */
#define SCOPE_REFS(X)  X(s->step) X(s->slow) X(s->globals) X(s->bound[0]) X(s->bound[1])
#define SCOPE_VISIT(o) Py_VISIT(o);
#define SCOPE_CLEAR(o) Py_CLEAR(o);

static int scope_traverse(PyObject *self, visitproc visit, void *arg)
{
    Scope *s = (Scope *)self;
    SCOPE_REFS(SCOPE_VISIT)
    return 0;
}

static int scope_clear(PyObject *self)
{
    Scope *s = (Scope *)self;
    SCOPE_REFS(SCOPE_CLEAR)
    s->h = NULL;
    s->begin = s->end = NULL;
    return 0;
}

static void scope_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    scope_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* StepScope(slow, begin, end, handle, globals): begin, end and handle are
 * addresses (ints, not 0). */
static PyObject *scope_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *slow, *globals;
    unsigned long long begin, end, h;
    static char *names[] = {"slow", "begin", "end", "handle", "globals", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OKKKO!:StepScope", names, &slow, &begin, &end, &h,
                                     &PyDict_Type, &globals)) {
        return NULL;
    }
    if (begin == 0 || end == 0 || h == 0) {
        PyErr_SetString(PyExc_ValueError, "StepScope: a NULL address");
        return NULL;
    }
    Scope *s = (Scope *)type->tp_alloc(type, 0);
    if (s == NULL) {
        return NULL;
    }
    s->step = PyLong_FromLong(0);
    if (s->step == NULL) {
        Py_DECREF(s);
        return NULL;
    }
    Py_INCREF(slow);
    s->slow = slow;
    Py_INCREF(globals);
    s->globals = globals;
    for (int i = 0; i < 2; i++) {
        s->bound[i] = PyCFunction_NewEx(&slot_defs[i], (PyObject *)s, NULL);
        if (s->bound[i] == NULL) {
            Py_DECREF(s);
            return NULL;
        }
    }
    s->h = (profd_client_t *)(uintptr_t)h;
    s->begin = (step_fn)(uintptr_t)begin;
    s->end = (step_fn)(uintptr_t)end;
    return (PyObject *)s;
}

static PyMethodDef scope_methods[] = {
    {"set", scope_set, METH_O, "The scope with step n (c.step(n))"},
    {"begin", scope_begin, METH_O, "profd_step_begin(n), as Client.step_begin"},
    {"end", scope_end, METH_O, "profd_step_end(n), as Client.step_end"},
    {"_disable", scope_disable, METH_NOARGS, "No more calls into libprofd (closed client)"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef scope_members[] = {
    {"step", T_OBJECT_EX, offsetof(Scope, step), 0, "the step of the next __enter__/__exit__"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ScopeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "profd._speedups.StepScope",
    .tp_basicsize = sizeof(Scope),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The step scope of an open profd.Client, in C",
    .tp_new = scope_new,
    .tp_dealloc = scope_dealloc,
    .tp_traverse = scope_traverse,
    .tp_clear = scope_clear,
    .tp_methods = scope_methods,
    .tp_members = scope_members,
};

/*
 * `with` looks __enter__ and __exit__ up on the type and binds them to the
 * object: for a method that is a new bound-method object each time, two
 * allocations per step. These descriptors hand out the two each scope bound
 * once instead.
 */
typedef struct {
    PyObject_HEAD int slot; /* 0: __enter__, 1: __exit__ */
} Slot;

static PyObject *slot_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || !PyObject_TypeCheck(obj, &ScopeType)) {
        Py_INCREF(self);
        return self;
    }
    PyObject *m = ((Scope *)obj)->bound[((Slot *)self)->slot];
    if (m == NULL) { /* cleared by the garbage collector */
        PyErr_SetString(PyExc_RuntimeError, "StepScope: cleared");
        return NULL;
    }
    Py_INCREF(m);
    return m;
}

static PyTypeObject SlotType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "profd._speedups.Slot",
    .tp_basicsize = sizeof(Slot),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "__enter__ or __exit__ of StepScope, bound once per scope",
    .tp_descr_get = slot_get,
};

static int add_slots(void)
{
    for (int i = 0; i < 2; i++) {
        Slot *d = PyObject_New(Slot, &SlotType);
        if (d == NULL) {
            return -1;
        }
        d->slot = i;
        int rv = PyDict_SetItemString(ScopeType.tp_dict, slot_defs[i].ml_name, (PyObject *)d);
        Py_DECREF(d);
        if (rv < 0) {
            return -1;
        }
    }
    PyType_Modified(&ScopeType);
    return 0;
}

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "profd._speedups",
    .m_doc = "profd.Client's step scope in C (optional; see client.py)",
    .m_size = -1,
};

static int intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__speedups(void);

PyMODINIT_FUNC PyInit__speedups(void)
{
    if (intern(&s_interrupted, "_interrupted") < 0 || intern(&s_reraise, "_reraise") < 0 ||
        intern(&s_step, "step") < 0 || intern(&s_enter, "__enter__") < 0 ||
        intern(&s_exit, "__exit__") < 0 || intern(&s_disable, "_disable") < 0) {
        return NULL;
    }
    if (PyType_Ready(&SlotType) < 0 || PyType_Ready(&ScopeType) < 0 || add_slots() < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&speedups_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&ScopeType);
    if (PyModule_AddObject(m, "StepScope", (PyObject *)&ScopeType) < 0) {
        Py_DECREF(&ScopeType);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "ABI", SPEEDUPS_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
