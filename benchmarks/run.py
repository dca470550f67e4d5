"""Run the benchmarks, each in its own process: ``python benchmarks/run.py [name ...]
[--quick] [--section ...]``.

Names are the ``bench_<name>.py`` files of this folder (lookup, testers, ad, interop,
linalg, ...). Each prints its own table of medians and ratios. Options (``--quick``;
``--section NAME`` for ``ad``) are passed on to every benchmark run.
"""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    available = sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    options, names = [], []
    args = iter(argv)
    for a in args:
        if a.startswith("--"):
            options.append(a)
            if a == "--section":
                options.append(next(args, ""))
        else:
            names.append(a)
    wanted = names or available
    unknown = [w for w in wanted if w not in available]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {available}", file=sys.stderr)
        return 2
    status = 0
    for name in wanted:
        print(f"\n=== {name} ===", flush=True)
        status |= subprocess.call([sys.executable, str(HERE / f"bench_{name}.py"),
                                   *options])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
