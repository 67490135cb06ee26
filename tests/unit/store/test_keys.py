"""Every per-run key family is in `Keys.run_retained`, so the retention bound reaches it."""

from __future__ import annotations

import inspect

from tier2.store.keys import Keys


def test_every_run_key_family_is_retained() -> None:
    keys = Keys(prefix="p")
    families = {name for name, fn in inspect.getmembers(Keys, inspect.isfunction)
                if name.startswith("run_") and name != "run_retained"
                and list(inspect.signature(fn).parameters) == ["self", "run_id"]}
    assert len(families) > 15                                   # the scan found the families
    retained = set(keys.run_retained("R"))
    missing = {name for name in families - {"run_channel"} if getattr(keys, name)("R") not in retained}
    assert not missing, f"add to Keys.run_retained: {sorted(missing)}"
    assert keys.run("R") in retained and keys.run_channel("R") not in retained  # pub/sub is not a key
    assert all("R" in k for k in retained) and len(retained) == len(keys.run_retained("R"))
