"""Retrieval: goal matching, resume outcome and bundle assembly; pure functions over records."""
