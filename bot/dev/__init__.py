"""Development helpers: a throwaway local Synapse for the demo and the tests."""
