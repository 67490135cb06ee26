"""The embedded store's home directory (`tier2.store.embedded_home`) distrusts what it finds: links, other users'
files, files others could read, reused pids. Pure filesystem and ``flock``; no redis-server."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tier2.errors import RedisUnavailable
from tier2.store.embedded_home import (
    OwnerRecord,
    UntrustedFile,
    alone,
    hold_shared,
    open_lock,
    prepare_dir,
    process_start,
    read_owner,
    read_private,
    try_lock,
    write_private,
)


def test_the_home_is_made_private_and_a_planted_link_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "root" / "default"
    prepare_dir(home)
    assert all(stat.S_IMODE(d.stat().st_mode) == 0o700 for d in (home, home.parent))
    (tmp_path / "other").mkdir()
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "default").symlink_to(tmp_path / "other")
    with pytest.raises(RedisUnavailable, match="link"):
        prepare_dir(tmp_path / "linked" / "default")
    assert list((tmp_path / "other").iterdir()) == []


def test_the_lock_excludes_a_second_holder_and_is_freed_on_close(tmp_path: Path) -> None:
    a, b = open_lock(tmp_path / ".lock"), open_lock(tmp_path / ".lock")
    try:
        assert try_lock(a) and not try_lock(b)
        os.close(a)  # what the kernel does when the owner dies
        a = -1
        assert try_lock(b)
    finally:
        for fd in (a, b):
            if fd >= 0:
                os.close(fd)


def test_a_linked_lock_file_is_refused_not_replaced(tmp_path: Path) -> None:
    (tmp_path / ".lock").symlink_to(tmp_path / "target")
    with pytest.raises(RedisUnavailable, match="link"):
        open_lock(tmp_path / ".lock")
    assert not (tmp_path / "target").exists()


def test_alone_sees_every_other_user(tmp_path: Path) -> None:
    me, other = open_lock(tmp_path / ".users"), open_lock(tmp_path / ".users")
    try:
        hold_shared(me)
        assert alone(me)
        hold_shared(other)
        assert not alone(me)
        os.close(other)
        other = -1
        assert alone(me) and not try_lock(open_fd := open_lock(tmp_path / ".users"))  # still held shared by me
        os.close(open_fd)
    finally:
        for fd in (me, other):
            if fd >= 0:
                os.close(fd)


@pytest.mark.parametrize("plant", ["link", "mode", "fifo"])
def test_read_private_believes_only_this_users_private_regular_file(tmp_path: Path, plant: str) -> None:
    path = tmp_path / "redis.url"
    if plant == "link":
        (tmp_path / "t").write_text("redis://x\n")
        path.symlink_to(tmp_path / "t")
    elif plant == "mode":
        path.write_text("redis://x\n")
        os.chmod(path, 0o640)
    else:
        os.mkfifo(path, 0o600)
    with pytest.raises(UntrustedFile):
        read_private(path)


def test_read_private_of_another_uid_is_untrusted(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("chown to another uid needs root")
    path = write_private(tmp_path, "redis.url", "redis://x\n")
    os.chown(path, 65534, 65534)
    with pytest.raises(UntrustedFile, match="uid 65534"):
        read_private(path)


def test_write_private_replaces_a_link_and_not_its_target(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep\n")
    (tmp_path / "redis.url").symlink_to(tmp_path / "victim")
    path = write_private(tmp_path, "redis.url", "new\n")
    assert not path.is_symlink() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_private(path) == "new\n" and (tmp_path / "victim").read_text() == "keep\n"
    assert read_private(tmp_path / "absent") is None


def test_an_owner_record_knows_a_reused_pid_from_its_server(tmp_path: Path) -> None:
    me = process_start(os.getpid())
    assert me is not None
    OwnerRecord(1, os.getpid(), me, 6379).write(tmp_path)
    record = read_owner(tmp_path)
    assert record is not None and record.server_alive()
    assert not OwnerRecord(1, os.getpid(), str(int(me) + 1), 6379).server_alive()  # same number, another process
    (tmp_path / "owner.json").write_text("{not json")
    os.chmod(tmp_path / "owner.json", 0o600)
    assert read_owner(tmp_path) is None
