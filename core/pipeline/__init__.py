"""The question pipeline: pre-steps, retrieval with rights, the grounded answer, the check."""
