"""Fault injection helpers for the embedded brokers: a slow-fsync shim.

The shim is a tiny C library loaded into the broker's JVM with ``LD_PRELOAD``. It wraps ``fsync`` and
``fdatasync``: before each call it reads a control file (its path in ``CONNECT_MAGICS_FSYNC_DELAY_FILE``)
holding a delay in milliseconds and sleeps that long, so that the delay can be changed while the broker
runs (:meth:`EmbeddedBroker.set_fsync_delay`). Files whose path contains ``CONNECT_MAGICS_FSYNC_SKIP``
(by default the KRaft metadata log, whose slowness would fence the broker: a different fault) are synced
at full speed. The library is compiled with ``cc`` once per source version into the user cache.

>>> fsync_shim()  # doctest: +SKIP
PosixPath('/home/me/.cache/connect_magics/fsync-shim/slow_fsync-1a2b3c4d5e6f.so')
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from connect_magics.local.jars import cache_dir

DELAY_FILE_ENV = "CONNECT_MAGICS_FSYNC_DELAY_FILE"
SKIP_ENV = "CONNECT_MAGICS_FSYNC_SKIP"
METADATA_LOG = "__cluster_metadata"

SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The delay in ms read from the control file, or 0 (no file, no delay, or a skipped path). */
static long delay_ms(int fd) {
    const char *control = getenv("CONNECT_MAGICS_FSYNC_DELAY_FILE");
    if (control == NULL) return 0;
    int c = open(control, O_RDONLY | O_CLOEXEC);
    if (c < 0) return 0;
    char buf[32];
    ssize_t n = read(c, buf, sizeof buf - 1);
    close(c);
    if (n <= 0) return 0;
    buf[n] = 0;
    long ms = strtol(buf, NULL, 10);
    if (ms <= 0) return 0;
    const char *skip = getenv("CONNECT_MAGICS_FSYNC_SKIP");
    if (skip != NULL && *skip) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len > 0) {
            target[len] = 0;
            if (strstr(target, skip) != NULL) return 0;
        }
    }
    return ms;
}

static void wait_for(int fd) {
    int saved = errno;
    long ms = delay_ms(fd);
    if (ms > 0) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
    }
    errno = saved;
}

int fsync(int fd) {
    static int (*real)(int) = NULL;
    if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    wait_for(fd);
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int) = NULL;
    if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    wait_for(fd);
    return real(fd);
}
"""


class ShimBuildError(RuntimeError):
    """The slow-fsync shim could not be compiled; the message names what is missing."""


def fsync_shim(compiler: str | None = None) -> Path:
    """The compiled slow-fsync shim (a shared library), built with ``cc`` (or ``gcc``) on first use."""
    digest = hashlib.sha256(SHIM_SOURCE.encode()).hexdigest()[:12]
    target = cache_dir() / "fsync-shim" / f"slow_fsync-{digest}.so"
    if target.exists():
        return target
    cc = compiler or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise ShimBuildError("The slow-fsync fault needs a C compiler to build its LD_PRELOAD shim, but neither "
                             "`cc` nor `gcc` is on the PATH. Install one (Debian/Ubuntu: apt-get install gcc).")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        source = Path(tmp) / "slow_fsync.c"
        source.write_text(SHIM_SOURCE)
        built = Path(tmp) / target.name
        out = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(built), str(source), "-ldl"],
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise ShimBuildError(f"Compiling the slow-fsync shim with {cc} failed (are the C library headers "
                                 f"installed? Debian/Ubuntu: apt-get install libc6-dev):\n"
                                 f"{(out.stdout + out.stderr).strip()[-2000:]}")
        os.replace(built, target)  # atomic: a concurrent build leaves one complete file
    return target


def shim_environment(delay_file: Path, skip: str | None = METADATA_LOG) -> dict[str, str]:
    """The environment variables that load the shim into a JVM and point it at ``delay_file``."""
    preload = " ".join(p for p in (str(fsync_shim()), os.environ.get("LD_PRELOAD", "")) if p)
    env = {"LD_PRELOAD": preload, DELAY_FILE_ENV: str(delay_file)}
    if skip:
        env[SKIP_ENV] = skip
    return env


def write_delay(delay_file: Path, delay_ms: int) -> None:
    """Set the shim's delay (read before every fsync), atomically."""
    tmp = delay_file.with_suffix(".tmp")
    tmp.write_text(f"{max(0, int(delay_ms))}\n")
    os.replace(tmp, delay_file)
