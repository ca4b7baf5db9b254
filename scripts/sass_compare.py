"""Compares the SASS of two builds of our kernels, function by function, instruction addresses
stripped: which kernels are identical, which differ, which exist in one build only. A host-side
change whose kernels all come out identical to a GPU-verified build needs no new GPU run for
them; any kernel listed as different does.

    nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Icsrc -c csrc/cuda/cuda_kernels.cu -o /tmp/new.o
    git stash; (same command) -o /tmp/old.o; git stash pop
    python3 scripts/sass_compare.py /tmp/old.o /tmp/new.o
    python3 scripts/sass_compare.py old.so new.so --rename-new '(tile_transpose_kernel<[^()]*), 0>[(]' '\1>('

--rename-new PATTERN REPLACEMENT rewrites the new build's names (re.sub) before matching: a
template parameter added with a default renames every instance of the kernel, whose SASS may
still be the same.

cuobjdump and c++filt must be on PATH (PyPI's nvidia-cuda-cuobjdump wheel has cuobjdump).
Functions are matched by their demangled names.
"""
import re
import subprocess
import sys

_ADDRESS = re.compile(r"/\*[0-9a-f]{4,}\*/")


def kernels(object_file):
    """Demangled kernel name -> its SASS without addresses."""
    text = subprocess.run(["cuobjdump", "--dump-sass", object_file], check=True, capture_output=True,
                          text=True).stdout
    parts = re.split(r"\n\s*Function : ", text)[1:]
    names = [part.split("\n", 1)[0].strip() for part in parts]
    demangled = subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True,
                               text=True).stdout.split("\n")
    result = {}
    for name, part in zip(demangled, parts):
        # Addresses out, runs of blanks folded: the column padding follows the address width,
        # which differs between an object file and a linked library.
        body = [" ".join(_ADDRESS.sub("", line).split()) for line in part.split("\n")[1:] if _ADDRESS.search(line)]
        result[name] = "\n".join(body)
    return result


def main(argv):
    rename = None
    if len(argv) == 5 and argv[2] == "--rename-new":
        rename = (re.compile(argv[3]), argv[4])
    elif len(argv) != 2:
        raise SystemExit("usage: sass_compare.py OLD.o NEW.o [--rename-new PATTERN REPLACEMENT]")
    old, new = kernels(argv[0]), kernels(argv[1])
    if rename is not None:
        new = {rename[0].sub(rename[1], name): body for name, body in new.items()}
    same = sorted(k for k in old.keys() & new.keys() if old[k] == new[k])
    differ = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    for label, names in [("differ", differ), ("only in " + argv[0], sorted(old.keys() - new.keys())),
                         ("only in " + argv[1], sorted(new.keys() - old.keys()))]:
        for name in names:
            print(f"{label}: {name}")
    print(f"{len(same)} identical, {len(differ)} different, {len(old.keys() - new.keys())} only in the first, "
          f"{len(new.keys() - old.keys())} only in the second")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
