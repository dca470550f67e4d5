"""First-call costs, each measured in a fresh Python process: importing a library, and
the first ``grad`` / ``hessian`` after the import (source reading and rewriting, rule
lookups filling their caches, tracing; for ``jax.jit`` the compilation).

Each job is a ``python -c`` child that times itself with ``time.perf_counter`` (so the
interpreter's own start-up is not counted) and prints JSON. Rounds run every job once,
in a rotating order; the tables give medians over rounds. The children:

- see ``PYTHONDONTWRITEBYTECODE`` removed and ``PYTHONPYCACHEPREFIX`` pointing to one
  cache folder, which a warm-up round fills first: imports load compiled bytecode, as
  an installed package's do, and nothing is written into the source trees or the venv;
  ``CHAINRULES_CACHE_DIR`` points into it too, so chainrules.ad finds the rewritten
  code of the warm-up round (its row "no rewrite cache" shows a machine's first call);
- inherit the parent's one-thread settings (OMP/MKL/OpenBLAS, XLA) and set torch's;
- run the same source text (``_ad_programs.py``) with ``np`` bound to their library, and
  print the derivative they got, which must agree with ours.
"""

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import chainrules
from _bench_harness import close, fmt

HERE = Path(__file__).resolve().parent
PYCACHE = Path(tempfile.gettempdir()) / "chainrules-bench-pycache"
TARGETS = {"import": 0.2, "grad": 0.020, "hessian": 0.100}  # issue #16, seconds

_DATA = """
import numpy
_rng = numpy.random.default_rng(0)
w = _rng.standard_normal(5) * 0.3
x = _rng.standard_normal((8, 5))
y = _rng.standard_normal(8)
v = _rng.standard_normal(5)
import _ad_programs
"""

# library: (imports, timed; setup, untimed; what makes the gradient function and the
# Hessian function (part of the first call's time); what waits for the result; the
# result as NumPy). Each child calls the function it made twice: first and second call.
_LIBS = {
    "chainrules.ad": (
        "import numpy as np\nfrom chainrules.ad import grad, hessian",
        "_ad_programs.np = np",
        "grad(_ad_programs.loss20)", "hessian(_ad_programs.small)", "",
        "numpy.asarray(out)",
    ),
    "autograd": (
        "import autograd\nimport autograd.numpy as anp",
        "_ad_programs.np = anp",
        "autograd.grad(_ad_programs.loss20)", "autograd.hessian(_ad_programs.small)", "",
        "numpy.asarray(out)",
    ),
    "torch eager": (
        "import torch",
        "torch.set_num_threads(1)\n_ad_programs.np = torch\n"
        "w, x, y, v = (torch.tensor(a) for a in (w, x, y, v))\n"
        "def _torch_grad(f):\n"
        "    def f_grad(w, *rest):\n"
        "        w = w.detach().requires_grad_()\n"
        "        return torch.autograd.grad(f(w, *rest), w)[0]\n"
        "    return f_grad",
        "_torch_grad(_ad_programs.loss20)", "torch.func.hessian(_ad_programs.small)", "",
        "out.detach().numpy()",
    ),
    "jax eager": (
        "import jax\nimport jax.numpy as jnp",
        "jax.config.update('jax_enable_x64', True)\n_ad_programs.np = jnp\n"
        "w, x, y, v = (jnp.asarray(a).block_until_ready() for a in (w, x, y, v))",
        "jax.grad(_ad_programs.loss20)", "jax.hessian(_ad_programs.small)",
        ".block_until_ready()", "numpy.asarray(out)",
    ),
    "jax.jit": (
        "import jax\nimport jax.numpy as jnp",
        "jax.config.update('jax_enable_x64', True)\n_ad_programs.np = jnp\n"
        "w, x, y, v = (jnp.asarray(a).block_until_ready() for a in (w, x, y, v))",
        "jax.jit(jax.grad(_ad_programs.loss20))", "jax.jit(jax.hessian(_ad_programs.small))",
        ".block_until_ready()", "numpy.asarray(out)",
    ),
}

# import-only jobs: what a user's ``import`` line costs in a fresh process
_IMPORTS = {
    "numpy": "import numpy",
    "chainrules": "import chainrules",
    "chainrules.ad": "import chainrules.ad",
    "autograd": "import autograd",
    "torch": "import torch",
    "jax": "import jax",
}


def _job(imports: str, setup: str = "", make: str = "", args: str = "", wait: str = "",
         result: str = "") -> str:
    """The child's code: time the imports, then (untimed) the setup, then the first call
    (making the derivative function and calling it) and a second call of that function;
    print the wall and CPU times of each and the first call's result as JSON."""
    mark = "_m.append((_time.perf_counter(), _time.process_time()))"
    lines = ["import time as _time", "_m = []", mark, imports, mark]
    if make:
        lines += [_DATA, setup, mark, f"_f = {make}", f"out = _f{args}{wait}", mark,
                  f"_f{args}{wait}", mark, f"_value = {result}.ravel().tolist()"]
    else:
        lines += [mark, mark, mark, "_value = None"]
    lines += ["_b = globals().get('_before_ad', _m[0])",
              "import json as _json",
              "print(_json.dumps({_k: [_m[_j][_c] - _m[_i][_c] for _c in (0, 1)] "
              "for _k, _i, _j in (('import', 0, 1), ('first', 2, 3), ('second', 3, 4))} "
              "| {'value': _value, 'before_ad': [_b[0] - _m[0][0], _b[1] - _m[0][1]]}))"]
    return "\n".join(lines)


def _installed(name: str) -> bool:
    top = {"torch eager": "torch", "jax eager": "jax", "jax.jit": "jax"}.get(name, name)
    return importlib.util.find_spec(top.split(".")[0]) is not None


def _jobs(wanted: set[str]) -> dict[str, str]:
    """The children's code by job name; peers that are not installed are left out."""
    jobs = {f"import {name}": _job(code) for name, code in _IMPORTS.items()
            if _installed(name)}
    for lib, (imports, setup, grad_make, hess_make, wait, result) in _LIBS.items():
        if not _installed(lib):
            continue
        if lib == "chainrules.ad":
            # chainrules first, so the ``chainrules.ad`` part of the import is apart
            imports = ("import chainrules\n"
                       "_before_ad = (_time.perf_counter(), _time.process_time())\n" + imports)
        jobs[f"grad {lib}"] = _job(imports, setup, grad_make, "(w, x, y)", wait, result)
        jobs[f"hessian {lib}"] = _job(imports, setup, hess_make, "(v,)", wait, result)
        if lib == "chainrules.ad":
            jobs[f"hessian {_COLD}"] = jobs[f"hessian {lib}"]
    if wanted:
        jobs = {k: v for k, v in jobs.items() if any(w in k for w in wanted)}
    return jobs


#: chainrules.ad's row with its on-disk cache of rewritten code turned off: the cost of
#: the very first call on a machine (the other rows find the warm-up round's entries,
#: as they find its bytecode)
_COLD = "chainrules.ad, no rewrite cache"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env["CHAINRULES_CACHE_DIR"] = str(PYCACHE / "chainrules")
    src = str(Path(chainrules.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), src, env.get("PYTHONPATH", "")])
    return env


def _run(code: str, env: dict[str, str], name: str = "") -> dict | None:
    if name.endswith(_COLD):
        env = env | {"CHAINRULES_CACHE_DIR": ""}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        print(f"  !! child failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def import_profile(env: dict[str, str], top: int = 12) -> list[tuple[int, int, str]]:
    """``-X importtime`` of ``import chainrules.ad``: the modules with the largest own
    (self) time, in µs, with their cumulative time."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import chainrules.ad"],
                          env=env, capture_output=True, text=True, timeout=300)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line.removeprefix("import time:").split("|")
        rows.append((int(self_us), int(cum_us), name.strip()))
    return sorted(rows, reverse=True)[:top]


def run(quick: bool, wanted: set[str]) -> int:
    reps = 3 if quick else 7
    env = _env()
    jobs = _jobs(wanted)
    print(f"first calls: fresh `{Path(sys.executable).name} -c` processes, {reps} rounds "
          "(medians); PYTHONDONTWRITEBYTECODE removed, bytecode (and chainrules.ad's "
          "rewritten code, CHAINRULES_CACHE_DIR) compiled by a warm-up "
          f"round into PYTHONPYCACHEPREFIX={PYCACHE}; times from inside the child (no "
          "interpreter start-up), wall and CPU (process_time: on a loaded machine wall "
          "time is mostly waiting for a core); one thread each", flush=True)
    status = 0
    for name, code in jobs.items():  # warm-up round: compiles and caches the bytecode
        if _run(code, env, name) is None:
            status = 1
    names = list(jobs)
    got: dict[str, list[dict]] = {name: [] for name in names}
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)]:
            out = _run(jobs[name], env, name)
            if out is None:
                status = 1
            else:
                got[name].append(out)
    got = {k: v for k, v in got.items() if v}

    def med(name: str, key: str, clock: int) -> float:
        return statistics.median(o[key][clock] for o in got[name])

    def both(name: str, key: str) -> str:
        return f"{fmt(med(name, key, 0)):>12}{fmt(med(name, key, 1)):>12}"

    # per round, so that the ratio to ``import numpy`` (run in the same round) is paired
    rows = [(name.removeprefix("import "), [o["import"] for o in got[name]])
            for name in got if name.startswith("import ")]
    if "grad chainrules.ad" in got:
        rows.append(("chainrules.ad after chainrules",
                     [[o["import"][c] - o["before_ad"][c] for c in (0, 1)]
                      for o in got["grad chainrules.ad"]]))
    base = dict(rows).get("numpy")
    if rows:
        print(f"\nimport in a fresh process (target {TARGETS['import'] * 1e3:.0f} ms for "
              "chainrules); ÷ numpy: CPU time over import numpy's in the same round")
        print(f"{'module':<34}{'wall':>12}{'CPU':>12}{'÷ numpy':>10}")
        for name, ts in rows:
            ratio = (f"{statistics.median(t[1] / b[1] for t, b in zip(ts, base)):9.2f}x"
                     if base and len(base) == len(ts) else "")
            print(f"{name:<34}{fmt(statistics.median(t[0] for t in ts)):>12}"
                  f"{fmt(statistics.median(t[1] for t in ts)):>12}{ratio:>10}")
    for kind in ("grad", "hessian"):
        reference = got.get(f"{kind} chainrules.ad")
        lines = []
        for lib in (*_LIBS, _COLD):
            name = f"{kind} {lib}"
            if name not in got:
                continue
            value = got[name][0]["value"]
            if reference and not close(np.array(value), np.array(reference[0]["value"]),
                                       rtol=1e-9):
                print(f"  !! {name} disagrees with chainrules.ad", file=sys.stderr)
                status = 1
            lines.append(f"{lib:<31}{both(name, 'import')}{both(name, 'first')}"
                         f"{both(name, 'second')}")
        if lines:
            what = "loss20(w, x, y), 5 weights" if kind == "grad" else "small(v), 5 x 5"
            print(f"\nfirst {kind} of {what} (target {TARGETS[kind] * 1e3:.0f} ms for "
                  "chainrules.ad's first call)")
            print(f"{'':<31}{'import':>24}{'first call':>24}{'second call':>24}")
            print(f"{'library':<31}" + f"{'wall':>12}{'CPU':>12}" * 3)
            print("\n".join(lines))
    if not wanted or "chainrules" in wanted:
        print("\n-X importtime of `import chainrules.ad`: largest own times")
        print(f"{'own':>10}{'cumulative':>12}  module")
        for self_us, cum_us, name in import_profile(env):
            print(f"{fmt(self_us * 1e-6):>10}{fmt(cum_us * 1e-6):>12}  {name}")
    print(flush=True)
    return status

