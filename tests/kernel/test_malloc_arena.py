"""The embedded web process has its threads share glibc's main arena (memoryhub.deferred.share_malloc_arena):
a thread's own arena made the reranker's forward on the background thread a fifth slower than in line.

Run in a fresh interpreter each, since the setting holds for the process's life: glibc's malloc_info lists
one <heap> per arena, so a thread that allocates a large block shows whether it got an arena of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import ctypes, ctypes.util, os, sys, tempfile, threading
    import numpy as np
    from memoryhub import deferred

    if sys.argv[1] == "shared":
        assert deferred.share_malloc_arena()
    kept = []
    thread = threading.Thread(target=lambda: kept.append(np.ones(1 << 18, dtype=np.float32) * 2))
    thread.start()
    thread.join()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    path = os.path.join(tempfile.mkdtemp(), "malloc.xml")
    stream = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    print(open(path).read().count("<heap nr="))
""")


def heaps(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and malloc_info")
def test_a_thread_of_the_embedded_process_allocates_from_the_main_arena() -> None:
    assert heaps("own") == 2  # without it, the thread's block came from an arena of its own
    assert heaps("shared") == 1
