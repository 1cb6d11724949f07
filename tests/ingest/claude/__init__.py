"""Tests of the claude adapter (looma_git/ingest/claude/)."""
