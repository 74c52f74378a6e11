# Spack recipe for sheaf (packaging/spack/README.md): a SIONlib 1.7 compatible
# toolkit for task-local container I/O in parallel programs.
#
# sheaf has no public release tarball yet, so this recipe has no url: install
# from a checkout with
#   spack repo add <checkout>/packaging/spack
#   spack env create -d env && spack -e env add sheaf@0.1.0
#   spack -e env develop --no-clone -p <checkout> sheaf@=0.1.0 && spack -e env install
# (packaging/spack/test.sh does exactly this, offline, with system externals).
import os

from spack.package import *


class Sheaf(CMakePackage):
    """Scalable task-local I/O: SIONlib 1.7 compatible containers, checkpoint
    strategies, an MPI-IO layer with a cache, distributed locks, global file
    status and a scalable loader."""

    homepage = "https://www.fz-juelich.de/jsc/sionlib"  # the format's home; sheaf has none of its own yet

    license("BSD-3-Clause")

    version("0.1.0")

    variant("mpi", default=True,
            description="MPI layers: libsheaf_mpi (sion_paropen_mpi), MPI-IO, locks, checkpoints")
    variant("openmp", default=True, description="OpenMP and hybrid layers (libsheaf_omp, libsheaf_ompi)")
    variant("fortran", default=False, description="SIONlib's Fortran 90 interface (sion_f90 modules)")
    variant("python", default=False, description="The Python package `sheaf` (ctypes over libsheaf)")
    variant("loader", default=False,
            description="The scalable loader's overlay across nodes (HMAC with libsodium); "
                        "without it the loader works on one node only")

    depends_on("cmake@3.20:", type="build")
    depends_on("mpi", when="+mpi")
    depends_on("libsodium", when="+loader")
    extends("python", when="+python")
    depends_on("python@3.8:", when="+python", type=("build", "run"))
    depends_on("py-numpy", when="+python", type=("build", "run"))

    # sheaf's MPI libraries are built for one MPI flavour (doc/install.md):
    # Spack's one-MPI-per-spec model gives each flavour its own prefix.
    conflicts("platform=darwin", msg="sheaf needs Linux (the loader uses LD_AUDIT and namespaces)")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("SHEAF_MPI", "mpi"),
            self.define_from_variant("SHEAF_OPENMP", "openmp"),
            self.define_from_variant("SHEAF_FORTRAN", "fortran"),
            self.define_from_variant("SHEAF_WITH_SODIUM", "loader"),
            self.define("SHEAF_CXX", False),
            self.define("BUILD_TESTING", self.run_tests),
        ]
        if spec.satisfies("+mpi"):
            # the spec's MPI, whatever mpicc is on the PATH: sheaf records its
            # flavour (mpich or openmpi) from this wrapper's mpi.h
            args.append(self.define("MPI_C_COMPILER", spec["mpi"].mpicc))
        return args

    @run_after("install")
    def install_python_package(self):
        """+python: bindings/python/sheaf into site-packages, with a link to
        the installed libsheaf beside its modules (where sheaf._lib looks)."""
        if not self.spec.satisfies("+python"):
            return
        dest = join_path(python_platlib, "sheaf")
        install_tree(join_path(self.stage.source_path, "bindings", "python", "sheaf"), dest)
        lib = find_libraries("libsheaf", root=self.prefix, shared=True, recursive=True)
        os.symlink(lib[0], join_path(dest, "libsheaf.so"))

    @run_after("install")
    def cache_smoke_test_sources(self):
        """the example the smoke test compiles against the installed library"""
        cache_extra_test_sources(self, [join_path("examples", "sion_convert.c")])

    def test_smoke(self):
        """sheaf version, sionconfig's flags, and a container written by
        examples/sion_convert.c compiled against the installed libsheaf, read
        back by it and by `sheaf cat`"""
        sheaf = which(self.prefix.bin.sheaf)
        out = sheaf("version", output=str, error=str)
        assert out.startswith("sheaf "), out
        sionconfig = which(self.prefix.bin.sionconfig)
        cflags = sionconfig("--cflags", "--ser", output=str, error=str).split()
        libs = sionconfig("--libs", "--ser", output=str, error=str).split()
        assert "-lsheaf" in libs, libs
        if self.spec.satisfies("+mpi"):
            mpilibs = sionconfig("--libs", "--mpi", output=str, error=str).split()
            assert "-lsheaf_mpi" in mpilibs, mpilibs
        src = join_path(self.test_suite.current_test_cache_dir, "examples", "sion_convert.c")
        cc = which(self.compiler.cc)
        cc(*cflags, "-o", "sion_convert", src, *libs)
        convert = which(join_path(".", "sion_convert"))
        with open("a.txt", "w") as f:
            f.write("alpha\n" * 100)
        with open("b.txt", "w") as f:
            f.write("beta\n" * 3000)
        convert("-c", "4096", "-w", "t.sion", "a.txt", "b.txt")
        convert("-r", "t.sion", "a.out", "b.out")
        for name in ("a", "b"):
            with open(name + ".txt") as f, open(name + ".out") as g:
                assert f.read() == g.read(), name
        got = sheaf("cat", "-t", "1", "t.sion", output=str, error=str)
        assert got == "beta\n" * 3000, got[:80]
        if self.spec.satisfies("+python"):
            python = which(self.spec["python"].command.path)
            out = python("-c", "import sheaf; print(sheaf.open('t.sion').ntasks)", output=str, error=str)
            assert out.strip() == "2", out
