"""Evaluation: a corpus and a question set through the real pipeline, scored and compared."""
