"""`tier2.store.connect.parse_redis_url`: every REDIS_URL form, and the malformed ones refused with the password
kept out of the message."""

from __future__ import annotations

import pytest

from tier2.errors import SetupError
from tier2.store.connect import parse_redis_url


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/2", "rediss://h:6380", "unix:///run/redis.sock?db=1"])
def test_a_single_server_url_goes_to_from_url_unchanged(url: str) -> None:
    target = parse_redis_url(url)
    assert (target.kind, target.url) == ("single", url)


def test_a_cluster_url_lists_its_seed_nodes_and_credentials() -> None:
    target = parse_redis_url("redis+cluster://u:p%40ss@10.0.0.1:7000,10.0.0.2:7001, [::1]:7002")
    assert target.kind == "cluster"
    assert target.nodes == (("10.0.0.1", 7000), ("10.0.0.2", 7001), ("::1", 7002))
    assert (target.username, target.password) == ("u", "p@ss")


def test_a_sentinel_url_names_the_sentinels_the_master_and_the_db() -> None:
    target = parse_redis_url("redis+sentinel://:secret@127.0.0.1:26379,127.0.0.1:26380/mymaster/3")
    assert target.kind == "sentinel"
    assert target.nodes == (("127.0.0.1", 26379), ("127.0.0.1", 26380))
    assert (target.master, target.db, target.username, target.password) == ("mymaster", 3, None, "secret")
    assert parse_redis_url("redis+sentinel://h:1/m").db == 0


@pytest.mark.parametrize("url", [
    "http://h:1", "redis+cluster://h", "redis+cluster://h:1/0", "redis+sentinel://h:1",
    "redis+sentinel://h:1/m/x", "redis+sentinel://h:x/m", "redis+cluster://:hunter2@h:1,bad",
])
def test_a_malformed_url_is_a_setup_error_without_the_password(url: str) -> None:
    with pytest.raises(SetupError) as info:
        parse_redis_url(url)
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize("url", ["redis+sentinel://:hunter2@127.0.0.1:1,127.0.0.1:2/m",
                                 "redis+cluster://u:hunter2@h:1,h:2"])
def test_logs_never_show_the_password_of_a_sentinel_or_cluster_url(url: str) -> None:
    from tier2.settings.secrets import redact_url

    shown = redact_url(url)
    assert "hunter2" not in shown and shown.endswith(url.rpartition("@")[2])
