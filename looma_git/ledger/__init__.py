"""The ledger: ops, canonical hashing, Lamport order, fold to state, constraints."""
