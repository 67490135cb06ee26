"""L1 hard gates: must pass; the writer loops until they do."""
