"""Feedback on answers: votes, the answers' traces, and what retrieval learns from them."""
