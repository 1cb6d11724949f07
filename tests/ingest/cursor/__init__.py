"""Tests of the cursor adapter (looma_git/ingest/cursor/)."""
