"""Tests of the windsurf adapter (looma_git/ingest/windsurf/)."""
