"""Every git ref name looma reads or writes, in one place (str and bytes forms)."""

from __future__ import annotations

# The shared op log: one commit per batch of ops (store/ledger_ref.py).
LEDGER_REF = "refs/looma/ledger"
# git notes on linked commits, the ledger's projection; notes.rewriteRef names it (store/notes.py).
NOTES_REF = "refs/notes/looma"
# What a sharing remote last had: refs/looma/remotes/<remote>/{ledger,notes} (store/sync.py).
TRACKING_PREFIX = "refs/looma/remotes/"

LEDGER_REF_B = LEDGER_REF.encode()
NOTES_REF_B = NOTES_REF.encode()
TRACKING_PREFIX_B = TRACKING_PREFIX.encode()


def tracking_ref(remote: str, which: str) -> str:
    """`refs/looma/remotes/<remote>/<which>` (`which` is "ledger" or "notes")."""
    return f"{TRACKING_PREFIX}{remote}/{which}"
