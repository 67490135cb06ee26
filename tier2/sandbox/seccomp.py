"""The seccomp filter of ``isolated`` (bubblewrap ``--seccomp FD``): a classic-BPF program built here, in pure
Python, for the host's architecture (x86_64 or aarch64).

Denied with ``EPERM``: mounting (``mount``, ``umount2``, the new mount API, ``pivot_root``), namespaces
(``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*`` flag), tracing and other processes' memory
(``ptrace``, ``process_vm_readv/writev``), kernel code and state (``kexec_*``, ``init/finit/delete_module``,
``bpf``, ``perf_event_open``, ``reboot``, ``swapon/off``, ``acct``, ``quotactl``, ``syslog``), the kernel keyring
(``keyctl``, ``add_key``, ``request_key``), ``userfaultfd``, handle-based opens (``open_by_handle_at``,
``name_to_handle_at``), ``personality`` and ``vhangup``. ``clone3`` gets ``ENOSYS`` (its flags sit behind a
pointer the filter cannot read; libc then falls back to ``clone``, whose flags it checks). Another syscall ABI
(i386 or x32 on x86_64, arm32 on aarch64) is denied as a whole. Everything else is allowed: bash, node, esbuild
and Chromium (``--no-sandbox``: the sandbox is bubblewrap's) run unchanged.
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["seccomp_program", "DENIED", "SYSCALLS"]

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000

#: syscall numbers per architecture (x86_64: arch/x86/entry/syscalls/syscall_64.tbl; aarch64: asm-generic)
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "mount": 165, "umount2": 166, "pivot_root": 155, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "unshare": 272, "setns": 308,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kexec_load": 246,
        "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "bpf": 321,
        "perf_event_open": 298, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179,
        "syslog": 103, "keyctl": 250, "add_key": 248, "request_key": 249, "userfaultfd": 323,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "personality": 135, "vhangup": 153,
        "clone": 56, "clone3": 435,
    },
    "aarch64": {
        "mount": 40, "umount2": 39, "pivot_root": 41, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "unshare": 97, "setns": 268,
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kexec_load": 104,
        "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106, "bpf": 280,
        "perf_event_open": 241, "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60,
        "syslog": 116, "keyctl": 219, "add_key": 217, "request_key": 218, "userfaultfd": 282,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "personality": 92, "vhangup": 58,
        "clone": 220, "clone3": 435,
    },
}
DENIED = tuple(n for n in SYSCALLS["x86_64"] if n not in ("clone", "clone3"))
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16  # struct seccomp_data: nr, arch, ip, args[6]


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(machine: str | None = None) -> bytes:
    """The filter as bubblewrap reads it from ``--seccomp FD`` (an array of ``struct sock_filter``)."""
    arch = machine or platform.machine()
    if arch not in SYSCALLS:
        raise ValueError(f"no seccomp filter for architecture {arch!r} (x86_64 and aarch64 are supported)")
    nr = SYSCALLS[arch]
    denied = [nr[name] for name in DENIED]
    # layout: [0] ld arch, [1] jeq arch, [2] ld nr, ([3] jge x32), denied..., clone3, clone, allow,
    #         clone-check: ld arg0, jset, allow; deny; enosys
    head = [("ld", _OFF_ARCH), ("arch",), ("ld", _OFF_NR)] + ([("x32",)] if arch == "x86_64" else [])
    body = [("deny_if", n) for n in denied] + [("enosys_if", nr["clone3"]), ("clone_if", nr["clone"]), ("allow",)]
    tail = [("ld", _OFF_ARG0), ("jset_new",), ("allow",), ("deny",), ("enosys",)]
    prog = head + body + tail
    at = {"clone_check": len(head) + len(body), "deny": len(prog) - 2, "enosys": len(prog) - 1}
    out = b""
    for i, ins in enumerate(prog):
        def to(label: str, i: int = i) -> int:
            off = at[label] - i - 1
            assert 0 <= off < 256
            return off
        op = ins[0]
        if op == "ld":
            out += _insn(_LD_ABS_W, int(ins[1]))
        elif op == "arch":
            out += _insn(_JEQ, _AUDIT_ARCH[arch], 0, to("deny"))
        elif op == "x32":
            out += _insn(_JGE, _X32_BIT, to("deny"), 0)
        elif op == "deny_if":
            out += _insn(_JEQ, int(ins[1]), to("deny"), 0)
        elif op == "enosys_if":
            out += _insn(_JEQ, int(ins[1]), to("enosys"), 0)
        elif op == "clone_if":
            out += _insn(_JEQ, int(ins[1]), to("clone_check"), 0)
        elif op == "jset_new":
            out += _insn(_JSET, _CLONE_NEW, to("deny"), 0)
        elif op == "allow":
            out += _insn(_RET, _ALLOW)
        elif op == "deny":
            out += _insn(_RET, _ERRNO | errno.EPERM)
        elif op == "enosys":
            out += _insn(_RET, _ERRNO | errno.ENOSYS)
    return out
