"""An on-disk cache of rewritten code, kept the way Python keeps its bytecode cache.

Rewriting a function (``_rewrite.py``) means reading its module's source, parsing it,
copying the function's tree and compiling it again: a few milliseconds per function.
A second derivative runs the rules' own pullbacks under the forward tracer, so the
first ``hessian`` in a process rewrote about 30 rule functions. This cache keeps each
rewritten code object on disk, so later processes load it instead.

- **Key**: a digest of the running code object itself (its instructions, names,
  constants, line numbers, file name; nested code included), of the rewriter's own
  source and of the Python version. A hit is the rewrite of exactly the code that
  runs, so an edited source file can never be served an old rewrite (an entry is only
  written after the rewriter checked that the source compiles to that code).
- **Where**: ``$CHAINRULES_CACHE_DIR`` if set (empty: no cache), else
  ``$XDG_CACHE_HOME/chainrules`` or ``~/.cache/chainrules``, one folder per Python
  version.
- **When**: entries are read always and written unless Python writes no bytecode
  (``PYTHONDONTWRITEBYTECODE``, ``sys.dont_write_bytecode``). Any error reading or
  writing (a read-only home, a corrupt entry) just means a cache miss.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import types

__all__ = ["cache_directory", "load", "store"]

_FORMAT = b"chainrules-rewrite-1"
_salt: bytes | None = None


def cache_directory() -> str | None:
    """The folder of this Python version's entries, or None when the cache is off."""
    configured = os.environ.get("CHAINRULES_CACHE_DIR")
    if configured is not None:
        base = configured
    else:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        base = os.path.join(home, "chainrules")
    if not base:
        return None
    return os.path.join(base, f"rewrite-{sys.implementation.cache_tag}")


def _rewriter_salt() -> bytes:
    """The rewriter's own source: a changed rewriter never meets its old output."""
    global _salt
    if _salt is None:
        digest = hashlib.sha256(_FORMAT)
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("_rewrite.py", "_rewrite_cache.py"):
            try:
                with open(os.path.join(here, name), "rb") as f:
                    digest.update(f.read())
            except OSError:
                digest.update(os.urandom(16))  # unknown rewriter: never share entries
        digest.update(sys.version.encode())
        _salt = digest.digest()
    return _salt


def _feed(digest: hashlib._Hash, code: types.CodeType) -> None:
    """Everything that makes ``code`` what it is, in a form that is the same in every
    process (``marshal`` output is not: it depends on reference counts)."""
    digest.update(repr((code.co_filename, code.co_name, getattr(code, "co_qualname", ""),
                        code.co_firstlineno, code.co_argcount, code.co_posonlyargcount,
                        code.co_kwonlyargcount, code.co_flags, code.co_names,
                        code.co_varnames, code.co_freevars, code.co_cellvars)).encode())
    digest.update(code.co_code)
    digest.update(code.co_linetable)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            digest.update(b"<code>")
            _feed(digest, const)
        else:
            digest.update(_const_repr(const).encode())
            digest.update(b"\0")


def _const_repr(x: object) -> str:
    if isinstance(x, frozenset):  # iteration order depends on string hashing
        return "frozenset(" + repr(sorted(map(_const_repr, x))) + ")"
    if isinstance(x, tuple):
        return "(" + ",".join(map(_const_repr, x)) + ")"
    return f"{type(x).__name__}:{x!r}"


def _path(code: types.CodeType) -> str | None:
    folder = cache_directory()
    if folder is None:
        return None
    digest = hashlib.sha256(_rewriter_salt())
    _feed(digest, code)
    return os.path.join(folder, digest.hexdigest() + ".code")


def load(code: types.CodeType) -> types.CodeType | None:
    """The cached rewrite of ``code``, or None."""
    path = _path(code)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            new = marshal.loads(f.read())
    except Exception:  # missing, unreadable or corrupt: a miss
        return None
    if not isinstance(new, types.CodeType) or new.co_name != code.co_name:
        return None
    return new


def store(code: types.CodeType, new: types.CodeType) -> None:
    """Keep ``new``, the rewrite of ``code``, for later processes (atomically)."""
    if sys.dont_write_bytecode:
        return
    path = _path(code)
    if path is None:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(marshal.dumps(new))
        os.replace(tmp, path)
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass
