"""Ingestion: the Adapter protocol, the registry and one module per agent."""
