"""In-place updates in traced code: ``y[i] = v``, ``y += v``, ``out=``, ``np.add.at``...

NumPy code writes into arrays; the AD records values. A write becomes a *functional
update* recorded like any other operation (``index_set(x, key, v)``, JAX's
``x.at[key].set(v)``), and the written object then stands for the new value:

- **A traced array** (a `Tracer`): the tracer object itself is updated in place (its
  primal and its tape index / tangent are replaced by the functional update's), so
  every Python name bound to it sees the write -- tracer identity is array identity.
- **A plain array** that receives a traced value (``y = np.zeros(3); y[0] = x``): the
  rewritten assignment rebinds the name (``y = call.setitem(y, 0, x)``), so ``y``
  becomes a tracer. Only a name the function binds itself can be rebound, and only
  when nothing else refers to the array (another name, a caller, a container); else
  `MutationError` names the write.
- **Inputs**: writing into an argument of the differentiated function is refused
  (`MutationError`): NumPy would change the caller's array, the AD would not. Write
  into a copy (``y = x.copy()``: a traced copy owns its memory).
- **Views** (``v = y[::2]``, ``y.T``, ``y.reshape(...)``): found through memory. A
  view's primal shares memory with its base's; the byte offsets of both give each
  element of the view its flat index in the base (``_index_map``). A write through a
  view is a write into its base at those indices; after a write into a base, every
  view of it that the AD can find (local variables of the frames above, and views it
  refreshed before, which it keeps in a registry) is recomputed from the new base
  (``base.reshape(-1)[index_map]``, a recorded gather) and updated in place. A view
  whose base the AD cannot find while another traced array shares its memory is
  refused by name. Views held only inside containers and never written through are
  not found: documented in the guide.
- **Saved values are never overwritten**: a pullback that saved an array before a
  later write must see the old value. The functional update copies the array
  (copy-on-write) unless nothing but the tracer refers to its buffer
  (``sys.getrefcount``: a saved primal, a view or a second tracer all hold a
  reference), and then writes into it in place. So a loop of ``n`` scalar writes
  into a preallocated array costs O(n), not O(n^2) copies; the update's own pullback
  and pushforward keep no primal.
- **Every order**: the update's rules are written with `_copy` / `_store`, which work on
  values of an outer trace too, so a rule run again on traced values (a Hessian) writes
  through this same machinery one level down.

Augmented assignment ``y[k] op= v`` is ``y[k] = y[k] op v``; ``y op= v`` on a traced
array is ``y[...] = y op v``. Duplicate integer indices follow NumPy: the last
write wins (its value gets the cotangent); ``np.add.at`` accumulates each.
"""

from __future__ import annotations

import sys
import types
import weakref
from typing import Any

import numpy as np

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule, unthunk

from . import _tracer
from ._dispatch import call, project_traced
from ._errors import MutationError
from ._tracer import AD_DIR, Tracer, deep_primal, is_input

__all__ = ["WritePullback", "index_set", "scatter_add", "write", "write_plain"]

_ndarray = np.ndarray
_NO = NoTangent()
_ZERO = ZeroTangent()


# ---------------------------------------------------------------------------------------
# The functional updates and their rules


def index_set(x: Any, key: Any, v: Any) -> Any:
    """A copy of ``x`` with ``x[key] = v`` (JAX's ``x.at[key].set(v)``).

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import grad
        >>> from chainrules.ad._inplace import index_set
        >>> index_set(np.zeros(3), 1, 5.0)
        array([0., 5., 0.])
        >>> grad(lambda x: np.sum(index_set(x, 0, 3.0 * x[1])))(np.ones(3))
        array([0., 4., 1.])
    """
    y = np.array(x, copy=True, order="K")
    y[key] = v
    return y


def _index_set_owned(x: Any, key: Any, v: Any) -> Any:
    """`index_set` that writes into ``x`` itself (called only when nothing else refers to
    ``x``'s memory, so no saved value changes)."""
    x[key] = v
    return x


def scatter_add(x: Any, key: Any, v: Any) -> Any:
    """A copy of ``x`` after ``np.add.at(x, key, v)`` (repeated indices accumulate).

    Example:
        >>> import numpy as np
        >>> from chainrules.ad._inplace import scatter_add
        >>> scatter_add(np.zeros(3), [0, 0, 2], 1.0)
        array([2., 0., 1.])
    """
    y = np.array(x, copy=True, order="K")
    np.add.at(y, key, v)
    return y


def _copy(x: Any) -> Any:
    """A copy that may be written (a tracer's copy owns new memory)."""
    if type(x) is Tracer:
        return x.copy()
    return np.array(x, copy=True, order="K")


def _store(y: Any, key: Any, v: Any) -> Any:
    """``y[key] = v`` on a value of any trace; the object that now holds the result."""
    if type(y) is Tracer:
        write(y, key, v)
        return y
    if _traced(v):
        return call(index_set, y, key, v)
    y[key] = v
    return y


def _traced(v: Any) -> bool:
    return type(v) is Tracer


def _zeros_like(x: Any) -> Any:
    p = deep_primal(x)
    return np.zeros(np.shape(p), dtype=np.result_type(p))


def _sum_to(g: Any, shape: tuple) -> Any:
    """``g`` summed over the axes that broadcasting added to an array of ``shape``."""
    gshape = np.shape(deep_primal(g))
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and gshape[lead + i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return np.reshape(g, shape)


def _has_int_array(key: Any) -> bool:
    parts = key if type(key) is tuple else (key,)
    for k in parts:
        if isinstance(k, (list, _ndarray)) and np.asarray(k).dtype.kind in "iu":
            return True
    return False


def _last_writers(shape: tuple, key: Any) -> Any:
    """For an integer-array ``key``, a 0/1 mask over ``x[key]``'s elements: 1 where the
    element is the one NumPy's ``x[key] = v`` leaves in place (the last of repeats)."""
    sel_shape = np.empty(shape, dtype=np.bool_)[key].shape
    n = int(np.prod(sel_shape))
    order = np.arange(n).reshape(sel_shape)
    slots = np.full(shape, -1, dtype=np.intp)
    slots[key] = order
    return (slots[key] == order).astype(float)


class WritePullback:
    """The pullback of `index_set`: ``x_bar`` is ``y_bar`` with the written region zeroed,
    ``v_bar`` is ``y_bar[key]`` (the last writer's, for repeated indices) summed to
    ``v``'s shape. A callable object, so that the reverse pass can run it on a
    cotangent array it owns in place (``_reverse._write_backward``: O(size of the
    write) per write, not a copy of the array); ``index`` is its tape index there."""

    __slots__ = ("index", "key", "mask", "project_v", "vshape")

    def __init__(self, shape: tuple, key: Any, v: Any) -> None:
        self.key = key
        self.vshape = np.shape(deep_primal(v))
        self.project_v = ProjectTo(deep_primal(v))
        self.mask = _last_writers(shape, key) if _has_int_array(key) else None
        self.index: int | None = None

    def value_bar(self, v_bar: Any) -> Any:
        """The cotangent of the written value from ``y_bar[key]``."""
        if self.mask is not None:
            v_bar = v_bar * self.mask
        return project_traced(self.project_v, _sum_to(v_bar, self.vshape))

    def __call__(self, y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, (ZeroTangent, NoTangent)):
            return _NO, y_bar, _NO, y_bar
        v_bar = self.value_bar(y_bar[self.key])
        x_bar = _store(_copy(y_bar), self.key, 0.0)
        return _NO, x_bar, _NO, v_bar


@rrule.register(index_set)
def index_set_rrule(x: Any, key: Any, v: Any) -> Any:
    """``x.at[key].set(v)``: ``x_bar`` is ``y_bar`` with the written region zeroed,
    ``v_bar`` is ``y_bar[key]`` summed to ``v``'s shape."""
    return _store(_copy(x), key, v), WritePullback(np.shape(deep_primal(x)), key, v)


@rrule.register(_index_set_owned)
def index_set_owned_rrule(x: Any, key: Any, v: Any) -> Any:
    """`index_set_rrule`, writing into ``x`` (nothing else refers to it)."""
    return _store(x, key, v), WritePullback(np.shape(deep_primal(x)), key, v)


def _set_frule(dargs: tuple, x: Any, key: Any, v: Any, owned: bool) -> tuple:
    _, x_dot, _, v_dot = dargs
    y = _store(x if owned else _copy(x), key, v)
    x_dot = unthunk(x_dot)
    v_dot = unthunk(v_dot)
    if isinstance(x_dot, (ZeroTangent, NoTangent)):
        y_dot = _zeros_like(y)
    elif owned and type(x_dot) is _ndarray and x_dot.base is None and x_dot.flags.writeable:
        # the written tracer's own tangent: `write` chose this rule only after checking
        # that nothing else refers to it
        y_dot = x_dot
    else:
        y_dot = _copy(x_dot)
    if isinstance(v_dot, (ZeroTangent, NoTangent)):
        v_dot = 0.0
    return y, _store(y_dot, key, v_dot)


@frule.register(index_set)
def index_set_frule(dargs: tuple, x: Any, key: Any, v: Any) -> Any:
    """``y_dot = x_dot.at[key].set(v_dot)``."""
    return _set_frule(dargs, x, key, v, False)


@frule.register(_index_set_owned)
def index_set_owned_frule(dargs: tuple, x: Any, key: Any, v: Any) -> Any:
    """`index_set_frule`, writing into ``x`` (and its tangent when unshared)."""
    return _set_frule(dargs, x, key, v, True)


def _add_at(y: Any, key: Any, v: Any) -> Any:
    """``np.add.at(y, key, v)`` on a value of any trace; the object holding the result."""
    if type(y) is Tracer or _traced(v):
        new = call(scatter_add, y, key, v)
        if type(y) is Tracer:
            _assign(y, new, "numpy.add.at")
            return y
        return new
    np.add.at(y, key, v)
    return y


def _scatter_pullback(key: Any, v: Any, sign: float) -> Any:
    vshape = np.shape(deep_primal(v))
    project_v = ProjectTo(deep_primal(v))

    def scatter_add_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, (ZeroTangent, NoTangent)):
            return _NO, y_bar, _NO, y_bar
        v_bar = y_bar[key]
        if sign != 1.0:
            v_bar = -v_bar
        return _NO, y_bar, _NO, project_traced(project_v, _sum_to(v_bar, vshape))

    return scatter_add_pullback


@rrule.register(scatter_add)
def scatter_add_rrule(x: Any, key: Any, v: Any) -> Any:
    """``np.add.at`` as a function: ``x_bar = y_bar``, ``v_bar = y_bar[key]``."""
    return _add_at(_copy(x), key, v), _scatter_pullback(key, v, 1.0)


@frule.register(scatter_add)
def scatter_add_frule(dargs: tuple, x: Any, key: Any, v: Any) -> Any:
    """``y_dot = x_dot`` after ``np.add.at(x_dot, key, v_dot)``."""
    _, x_dot, _, v_dot = dargs
    y = _add_at(_copy(x), key, v)
    x_dot, v_dot = unthunk(x_dot), unthunk(v_dot)
    y_dot = (_zeros_like(y) if isinstance(x_dot, (ZeroTangent, NoTangent))
             else _copy(x_dot))
    if not isinstance(v_dot, (ZeroTangent, NoTangent)):
        y_dot = _add_at(y_dot, key, v_dot)
    return y, y_dot


def _key_arrays(shape: tuple, key: Any) -> tuple:
    """Index arrays of the elements ``x[key]`` selects, one per axis of ``x``."""
    grid: Any = np.indices(shape)
    return tuple(g[key] for g in grid)


def _scatter_multiply(x: Any, key: Any, v: Any) -> Any:
    """``np.multiply.at`` from traced operations: ``x`` times, at each index, the
    product of the factors written there (division-free, so zeros are exact)."""
    shape = np.shape(deep_primal(x))
    sel_shape = np.empty(shape, dtype=np.bool_)[key].shape
    flat = np.ravel_multi_index(_key_arrays(shape, key), shape).reshape(-1)
    factors = np.reshape(v * np.ones(sel_shape), -1)
    prod: Any = np.ones(int(np.prod(shape)))
    for j in range(flat.size):
        prod = _store(prod, int(flat[j]), prod[int(flat[j])] * factors[j])
    return x * np.reshape(prod, shape)


# ---------------------------------------------------------------------------------------
# Writes into tracers


def _owned_buffer(p: Any, extra: int) -> bool:
    """Whether ``p`` (a tracer's primal) may be written in place: an array owning its
    memory that nothing refers to but the tracer (``extra``: the references the caller
    holds itself)."""
    # the tracer's slot, this frame's `p` and getrefcount's argument: 3 references
    if type(p) is Tracer:
        return sys.getrefcount(p) <= 3 + extra
    return (type(p) is _ndarray and p.base is None and p.flags.writeable
            and sys.getrefcount(p) <= 3 + extra)


def _assign(t: Tracer, new: Any, what: str) -> None:
    """Make the tracer ``t`` hold ``new`` (the result of an update of ``t``)."""
    if type(new) is not Tracer or new._trace is not t._trace:
        if type(new) is Tracer and new._trace.level > t._trace.level:
            raise MutationError(f"{what} of a value of an inner differentiation into an "
                                f"array of an outer one",
                                "the outer array would depend on the inner perturbation; "
                                "return the value from the inner function instead")
        raise MutationError(f"{what} on a traced array",
                            "the update did not give a traced array of the same level")
    t.primal = new.primal
    t.aux = new.aux


def write(t: Tracer, key: Any, value: Any, what: str = "`a[...] = value`") -> None:
    """``t[key] = value`` for a traced array ``t``: ``t`` (and every view of the same
    memory the AD can find) now holds the updated value."""
    key = _plain_key(key)
    if is_input(t):
        raise MutationError(f"{what} on a traced array",
                            "it is an argument of the differentiated function, and NumPy "
                            "would change the caller's array: write into a copy "
                            "(y = x.copy())")
    parent = _parent_of(t, what)
    if parent is not None:
        root, index_map = parent
        sel = index_map[key]
        write(root, np.unravel_index(sel, np.shape(deep_primal(root))), value, what)
        return
    kids = _children_of(t)
    p = t.primal
    fn = index_set
    if _owned_buffer(p, 1) and not kids:
        if t._trace.mode == "rrule" or type(t.aux) is not _ndarray \
                or sys.getrefcount(t.aux) <= 2:
            fn = _index_set_owned
    del p
    new = call(fn, t, key, value)
    if t._trace.mode == "rrule" and type(new) is Tracer and new._trace is t._trace:
        entry = t._trace.tape[new.aux]
        if type(entry) is tuple and len(entry) == 2 and type(entry[0]) is WritePullback:
            entry[0].index = new.aux  # (see _reverse._write_backward)
    _assign(t, new, what)
    for v, index_map in kids:
        _refresh(v, t, index_map, what)


def _plain_key(key: Any) -> Any:
    if type(key) is tuple:
        return tuple(deep_primal(k) if type(k) is Tracer else k for k in key)
    return deep_primal(key) if type(key) is Tracer else key


# views the AD refreshed (their primals are then copies, no longer NumPy views):
# id(base tracer) -> (weakref to it, [(weakref to a view, index map), ...]), and
# id(view tracer) -> (weakref to it, weakref to its base, index map)
_VIEWS: dict[int, tuple[Any, list]] = {}
_PARENTS: dict[int, tuple[Any, Any, Any]] = {}


def _register(base: Tracer, view: Tracer, index_map: Any) -> None:
    if len(_VIEWS) > 1024 or len(_PARENTS) > 1024:
        for k in [k for k, e in _VIEWS.items() if e[0]() is None]:
            del _VIEWS[k]
        for k in [k for k, e in _PARENTS.items() if e[0]() is None or e[1]() is None]:
            del _PARENTS[k]
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        entry = (weakref.ref(base), [])
        _VIEWS[id(base)] = entry
    kids = entry[1]
    kids[:] = [(w, m) for w, m in kids if w() is not None and w() is not view]
    kids.append((weakref.ref(view), index_map))
    _PARENTS[id(view)] = (weakref.ref(view), weakref.ref(base), index_map)


def _registered_parent(t: Tracer) -> Any:
    entry = _PARENTS.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    base = entry[1]()
    if base is None or base._trace is not t._trace:
        return None
    return base, entry[2]


def _refresh(v: Tracer, base: Tracer, index_map: Any, what: str) -> None:
    """Recompute the view ``v`` from its written ``base`` (and its own views after it)."""
    kids = _children_of(v)
    new = call(np.reshape, base, -1)[index_map]
    _assign(v, new, what)
    _register(base, v, index_map)
    for w, m in kids:
        _refresh(w, v, m, what)


def _children_of(t: Tracer) -> list:
    """The views of ``t`` the AD can find, each with its index map into ``t``."""
    out: list = []
    entry = _VIEWS.get(id(t))
    seen: set = set()
    if entry is not None and entry[0]() is t:
        for w, m in entry[1]:
            v = w()
            if v is not None and v._trace is t._trace:
                out.append((v, m))
                seen.add(id(v))
    p = deep_primal(t)
    if type(p) is not _ndarray:
        return out
    # memory views: other arrays referring to this buffer exist (the tracer's primal slot,
    # this frame's `p` and getrefcount's argument are the three references we hold)
    if sys.getrefcount(p) <= 3 and (p.base is None or sys.getrefcount(p.base) <= 2):
        return out
    for u in _frame_tracers(t):
        if id(u) in seen or u is t:
            continue
        q = deep_primal(u)
        if type(q) is not _ndarray or q is p or not np.shares_memory(q, p):
            continue
        m = _index_map(q, p)
        if m is None:
            continue
        seen.add(id(u))
        out.append((u, m))
    return out


def _parent_of(t: Tracer, what: str) -> Any:
    """``(base tracer, index map)`` when ``t`` is a view of another traced array, or
    None when ``t`` owns what it holds."""
    reg = _registered_parent(t) if _PARENTS else None
    if reg is not None:
        return reg
    p = deep_primal(t)
    if type(p) is not _ndarray or p.base is None:
        return None
    best = None
    shared = False
    for u in _frame_tracers(t):
        if u is t:
            continue
        q = deep_primal(u)
        if type(q) is not _ndarray or q is p or not np.shares_memory(q, p):
            continue
        shared = True
        m = _index_map(p, q)
        if m is not None and (best is None or q.size > deep_primal(best[0]).size):
            best = (u, m)
    if best is None and shared:
        raise MutationError(f"{what} through a view of a traced array",
                            "the AD cannot find the array it is a view of; write into "
                            "that array, or into a copy (v = v.copy())")
    return best


def _held_tracers(val: Any, depth: int) -> Any:
    """The tracers ``val`` is or holds: itself, the items of a list, tuple or dict, the
    attributes of an object (``self.view``), and theirs, ``depth`` levels down."""
    tv = type(val)
    if tv is Tracer:
        yield val
        return
    if depth == 0:
        return
    if tv is list or tv is tuple:
        items: Any = val
    elif tv is dict:
        items = val.values()
    else:
        attrs = getattr(val, "__dict__", None)
        if type(attrs) is not dict or isinstance(val, type) or tv is types.ModuleType:
            return
        items = attrs.values()
    for item in items:
        yield from _held_tracers(item, depth - 1)


def _frame_tracers(t: Tracer) -> list:
    """Tracers of ``t``'s trace bound to local variables of the frames above, or held
    there in lists, tuples, dicts and objects' attributes (two levels down), outside
    the AD's own code."""
    trace = t._trace
    out: list = []
    seen: set = set()
    f: Any = sys._getframe(2)
    depth = 0
    while f is not None and depth < 200:
        depth += 1
        if not f.f_code.co_filename.startswith(AD_DIR):
            for val in f.f_locals.values():
                for u in _held_tracers(val, 2):
                    if u._trace is trace and id(u) not in seen:
                        seen.add(id(u))
                        out.append(u)
        f = f.f_back
    return out


def _offsets(a: _ndarray, origin: int) -> Any:
    """The byte offset of each element of ``a`` from the address ``origin``."""
    off = np.full(a.shape, a.__array_interface__["data"][0] - origin, dtype=np.intp)
    for axis, (n, s) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[axis] = n
        off = off + (np.arange(n, dtype=np.intp) * s).reshape(shape)
    return off


def _index_map(view: _ndarray, base: _ndarray) -> Any:
    """For each element of ``view``, the flat (C-order) index of the element of ``base``
    in the same memory; None where the view is not made of ``base``'s elements."""
    if view.dtype != base.dtype:
        return None
    origin = base.__array_interface__["data"][0]
    boff = _offsets(base, origin).reshape(-1)
    voff = _offsets(view, origin)
    order = np.argsort(boff, kind="stable")
    pos = np.searchsorted(boff[order], voff)
    pos = np.clip(pos, 0, boff.size - 1)
    found = boff[order][pos]
    if not np.array_equal(found, voff):
        return None
    return order[pos]


# ---------------------------------------------------------------------------------------
# Writes into plain arrays (the preallocated output that becomes traced)


def write_plain(obj: _ndarray, key: Any, value: Any, refs: int, what: str) -> Any:
    """``obj[key] = value`` for a plain array ``obj`` and a traced ``value``: the traced
    array that now stands for ``obj`` (the caller rebinds its name). ``refs``: the
    references to ``obj`` that ``obj``'s one name and the calls down to here hold."""
    if obj.base is not None:
        raise MutationError(f"{what} with a traced value into a view of a plain array",
                            "the AD cannot make the array it views traced; write into "
                            "that array itself, or make the view a copy")
    if sys.getrefcount(obj) > refs + 1:
        # more references than the one variable: find out whose (a saved value of a
        # rule, kept as it was by the copy, is fine; a name, a view, an item is not)
        _check_unaliased(obj, what)
    return call(index_set, obj, _plain_key(key), value)


def _check_unaliased(target: _ndarray, what: str) -> None:
    """Refuse to rebind a plain array that another variable or a view also refers to."""
    if target.base is not None:
        raise MutationError(f"{what} with a traced value into a view of a plain array",
                            "the AD cannot make the array it views traced; write into "
                            "that array itself, or make the view a copy")
    names = 0
    f: Any = sys._getframe(1)
    while f is not None:
        if not f.f_code.co_filename.startswith(AD_DIR):
            for val in f.f_locals.values():
                names += _refers(val, target)
                if type(val) in (list, tuple):
                    names += 2 * sum(_refers(v, target) for v in val)
                elif type(val) is dict:
                    names += 2 * sum(_refers(v, target) for v in val.values())
                elif hasattr(val, "__dict__") and not isinstance(val, type):
                    fields = getattr(val, "__dict__", None)
                    if type(fields) is dict:
                        names += 2 * sum(_refers(v, target) for v in fields.values())
        f = f.f_back
    if names > 1:
        raise MutationError(f"{what} with a traced value into a plain array",
                            "the array is also referred to elsewhere (another variable, "
                            "a caller, a container or a view), which would not see the "
                            "traced value; create and fill the array in one function, "
                            "and pass it on after the writes")


def _refers(val: Any, target: _ndarray) -> int:
    """1 for the array itself, 2 for a view of it (a second reference), else 0."""
    if val is target:
        return 1
    if type(val) is _ndarray and val.base is target:
        return 2
    return 0


_tracer.WRITE[0] = write  # Tracer.__setitem__, x += v, x.fill, x.sort
