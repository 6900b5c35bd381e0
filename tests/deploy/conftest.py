"""The end-to-end fixtures (a real Synapse, people) for the container tests."""

from tests.e2e.conftest import homeserver, people  # noqa: F401
