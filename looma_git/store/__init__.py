"""Git plumbing through dulwich: the ledger ref, notes, sync; compare-and-swap updates."""
