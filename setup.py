"""Build hook: compile the per-decision hot path to C with mypyc (README "Benchmarks").

Everything else about the package is in pyproject.toml. The modules of the hot path are
ordinary, fully typed Python, declared in ``referee/native/hotpath.py``: mypyc turns each into a C extension that sits next to its
``.py`` and is imported instead of it (``bench engine`` about 2.3x faster). The build also
writes ``referee/native/compiled.json``, each compiled module's name and the SHA-256 of the
source it was compiled from; ``referee/native/loader.py`` reads it at start-up and runs the
``.py`` instead of any extension whose source has changed since (an edited editable
checkout, mutation testing) or when ``DURAK_PURE_PYTHON=1``.

No compiled build (pure Python everywhere, same behaviour, slower): ``DURAK_PURE_PYTHON=1
pip install ...``, or no C compiler / mypyc available (the build says so and goes on).
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
#: The hot path's source files, from its one declaration (read without importing referee).
COMPILED = tuple(name.replace(".", "/") + ".py"
                 for name in runpy.run_path(str(ROOT / "referee/native/hotpath.py"))["COMPILED"])
MANIFEST = "referee/native/compiled.json"


def _module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


class BuildExt(build_ext):
    """build_ext that writes the manifest once the extensions are built, listing only those
    that were (an optional one may fail): into the source tree for an in-place (editable)
    build, else into the build directory the wheel is made from. A build that fails leaves
    an older manifest alone, whose digests then no longer match the sources: those modules
    run as Python rather than as a stale extension."""

    def run(self) -> None:
        super().run()
        built = {}
        for path in COMPILED:
            name = _module_name(path)
            if Path(self.get_ext_fullpath(name)).exists():
                built[name] = hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
        target = ROOT / MANIFEST if self.inplace else Path(self.build_lib) / MANIFEST
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"compiler": "mypyc", "modules": built}, indent=1, sort_keys=True) + "\n")


def _remove_compiled() -> None:
    """A pure build: no extension or manifest left in the tree from an earlier build."""
    (ROOT / MANIFEST).unlink(missing_ok=True)
    for path in COMPILED:
        for leftover in (ROOT / path).parent.glob(Path(path).stem + ".*.so"):
            leftover.unlink()


def _extensions() -> list:
    if os.environ.get("DURAK_PURE_PYTHON", "") not in ("", "0"):
        print("durak-ref build: DURAK_PURE_PYTHON is set: no compiled modules", file=sys.stderr)
        _remove_compiled()
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as e:
        print(f"durak-ref build: mypyc is not available ({e}): pure Python, slower", file=sys.stderr)
        _remove_compiled()
        return []
    extensions = mypycify(list(COMPILED), opt_level="3", debug_level="0")
    for extension in extensions:
        # A failed C build (no compiler) leaves that module pure Python instead of failing
        # the install: referee/native/loader.py reports which modules did compile.
        extension.optional = True
    return extensions


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
