"""The language model: one async client for any OpenAI-compatible endpoint."""
