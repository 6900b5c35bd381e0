"""Checks that run before a question reaches search or the model."""
