"""The local, rebuildable index: store.db, Tantivy, sqlite-vec and the embedder."""
