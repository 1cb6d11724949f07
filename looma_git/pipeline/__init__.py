"""The refinery: extraction, work signals, resolution, confidence and promotion."""
