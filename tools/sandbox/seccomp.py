"""The seccomp filter bubblewrap installs for every sandboxed call (``bwrap --seccomp FD``).

It denies (``EPERM``) the system calls that sandbox escapes and kernel exploits lean
on and that a tool has no use for: tracing other processes, mounting, new namespaces
(``unshare``, ``setns``, ``clone`` with a namespace flag; ``clone3`` answers ``ENOSYS``
so the C library falls back to ``clone``), the kernel keyring, eBPF, perf events,
``userfaultfd``, ``io_uring``, module loading, ``kexec`` and a few administrative
calls. System calls of another ABI (32-bit ``int 0x80`` on x86-64) kill the process.

The program is compiled once per process by libseccomp through ``pyseccomp`` (a
ctypes binding; the host needs ``libseccomp2``). Without them the sandbox still runs,
with namespaces only, and says so in the log once.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import tempfile

logger = logging.getLogger(__name__)

DENIED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "name_to_handle_at",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "lookup_dcookie",
    "iopl",
    "ioperm",
)
# Namespace flags of clone(2): any of them makes a new namespace.
CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


@functools.cache
def escape_filter() -> bytes | None:
    """The compiled BPF program, or ``None`` (logged) when libseccomp is not available here."""
    try:
        import pyseccomp as seccomp  # optional: without libseccomp the ImportError is handled below

        rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in DENIED_SYSCALLS:
            try:
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except OSError:
                continue  # not a system call on this architecture
        for flag in CLONE_NAMESPACE_FLAGS:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        with tempfile.TemporaryFile() as program:
            rules.export_bpf(program)
            program.seek(0)
            return program.read()
    except (ImportError, OSError, RuntimeError) as exc:
        logger.warning("Tool sandbox: no seccomp filter (%s); calls are isolated by namespaces only.", exc)
        return None


def filter_fd(program: bytes) -> int:
    """A readable fd holding ``program`` (a memfd), for ``bwrap --seccomp``; the caller closes it."""
    fd = os.memfd_create("agentserver-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
