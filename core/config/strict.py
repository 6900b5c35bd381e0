from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A config section: unknown keys are errors, and settings never change in place.

    The docstring under each field is its description (`use_attribute_docstrings`): the
    configuration reference is generated from them (core/config/reference.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
