"""Tests of the opencode adapter (looma_git/ingest/opencode/)."""
