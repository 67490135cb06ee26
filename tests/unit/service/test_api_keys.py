from __future__ import annotations

import pytest

from tier2.errors import BadInput
from tier2.settings.api_keys import ApiKeys, parse_api_keys


def test_keys_map_to_tenants() -> None:
    keys = ApiKeys(parse_api_keys(" acme:key-acme-123 , globex:key-globex-45 "))
    assert keys.enabled and keys.tenant_for("key-acme-123") == "acme" and keys.tenant_for("nope") is None
    assert not ApiKeys(parse_api_keys("")).enabled


@pytest.mark.parametrize("raw", ["acme", "acme:short", ":key-without-tenant", "a:same-key-1,b:same-key-1"])
def test_malformed_key_lists_are_rejected(raw: str) -> None:
    with pytest.raises(BadInput):
        parse_api_keys(raw)
