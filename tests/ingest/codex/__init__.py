"""Tests of the codex adapter (looma_git/ingest/codex/)."""
