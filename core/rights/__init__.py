"""Rights: who reads an answer, and which documents the source applications let them see."""
