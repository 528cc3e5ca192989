"""The C extensions declared in pyproject.toml, built against NumPy's headers: xla/_fpmode.c sets a NumPy memory
handler around each host kernel (see there)."""
import numpy
from setuptools import setup
from setuptools.command.build_ext import build_ext


class _BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        self.include_dirs.append(numpy.get_include())


setup(cmdclass={"build_ext": _BuildExt})
