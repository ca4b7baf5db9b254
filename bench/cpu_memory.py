"""CPU runs: keep freed memory in the process, so that no call times the host backing fresh pages.

Every call of the functional ops allocates its output. glibc serves a block over 32 MiB with a
fresh mmap and hands it back with munmap when it is freed. On this project's CPU machine (a
Firecracker KVM guest) the guest kernel then reports the freed pages to the host through the
virtio balloon's free page reporting (feature bit 5, page_reporting_order 5: every free block
of 128 KiB or more), the host drops them, and the next call's first touch waits while the host
backs them again. Measured (docs/performance.md): 150 fresh bf16 4096² calls of ours had a
median of 4.2 ms and 15 calls over five times that (up to 35 ms), with 95 MiB reported during
the loop; every CPU suite run had one or two cases stalled at about 2 GB/s, whichever hit it.

With mmap off and trimming off, a freed output stays in the process's heap and the next call
reuses the same pages, as the CUDA caching allocator does on the GPU. Every implementation in
the run gets the same allocator, so the ratios compare kernels rather than the host's paging.
`python -m bench --fresh-pages` leaves glibc as it is.
"""
import ctypes
import platform

# mallopt's parameter numbers (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
# mallopt takes an int: the largest top of heap glibc may keep unreleased.
LARGEST_TRIM_THRESHOLD = 2**31 - 1


def keep_freed_memory():
    """Switches glibc's allocator to keep freed memory; returns how, for the results' meta, or
    why not (another C library: its allocator is left as it is)."""
    if platform.libc_ver()[0] != "glibc":
        return "fresh pages each call (not glibc: allocator left as it is)"
    libc = ctypes.CDLL(None)  # the process's own C library, the one torch allocates through
    if libc.mallopt(M_MMAP_MAX, 0) != 1 or libc.mallopt(M_TRIM_THRESHOLD, LARGEST_TRIM_THRESHOLD) != 1:
        raise RuntimeError("mallopt refused M_MMAP_MAX=0 or M_TRIM_THRESHOLD=2^31-1")
    return "freed memory kept in the process (glibc mallopt: M_MMAP_MAX=0, M_TRIM_THRESHOLD=2^31-1)"


FRESH_PAGES = "fresh pages each call (glibc's defaults: outputs over 32 MiB mmap'd and unmapped)"
