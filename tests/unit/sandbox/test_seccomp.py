"""The seccomp program, run through a classic-BPF interpreter for both architectures (the x86_64 one also runs for
real under bubblewrap: tests/sandbox/test_privileges.py)."""

from __future__ import annotations

import errno
import struct

import pytest

from tier2.sandbox.seccomp import DENIED, SYSCALLS, seccomp_program

ALLOW, ERRNO = 0x7FFF0000, 0x00050000
ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def run(prog: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """Evaluate the filter for one syscall (struct seccomp_data: nr, arch, ip, args[6])."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    insns = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35, 0x45):  # jeq / jge / jset
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_denies_what_it_lists_and_allows_the_rest(machine: str) -> None:
    prog, nr, arch = seccomp_program(machine), SYSCALLS[machine], ARCH[machine]
    for name in DENIED:
        assert run(prog, arch, nr[name]) == ERRNO | errno.EPERM, name
    for allowed in (0, 1, 3, 60, 172, 221, 260, 281):  # read/write/close, exit/getpid, execve... on either table
        if allowed not in {nr[n] for n in DENIED} | {nr["clone"], nr["clone3"]}:
            assert run(prog, arch, allowed) == ALLOW, allowed
    assert run(prog, arch, nr["clone"], 0x01200011) == ALLOW  # fork-like clone (SIGCHLD|CHILD_SETTID|...)
    assert run(prog, arch, nr["clone"], 0x003D0F00) == ALLOW  # pthread_create's flags
    for flag in (0x10000000, 0x40000000, 0x00020000, 0x20000000):  # NEWUSER, NEWNET, NEWNS, NEWPID
        assert run(prog, arch, nr["clone"], flag | 17) == ERRNO | errno.EPERM, hex(flag)
    assert run(prog, arch, nr["clone3"]) == ERRNO | errno.ENOSYS


def test_other_syscall_abis_are_denied_whole() -> None:
    x86 = seccomp_program("x86_64")
    assert run(x86, 0x40000003, 20) == ERRNO | errno.EPERM  # i386 (int 0x80) getpid
    assert run(x86, ARCH["x86_64"], 0x40000000 | 39) == ERRNO | errno.EPERM  # x32 getpid
    arm = seccomp_program("aarch64")
    assert run(arm, 0x40000028, 20) == ERRNO | errno.EPERM  # arm32 on aarch64
    assert run(arm, ARCH["x86_64"], 39) == ERRNO | errno.EPERM
    with pytest.raises(ValueError):
        seccomp_program("riscv64")
