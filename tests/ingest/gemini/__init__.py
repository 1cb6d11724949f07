"""Tests of the gemini adapter (looma_git/ingest/gemini/)."""
