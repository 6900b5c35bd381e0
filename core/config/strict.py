from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A config section: unknown keys are errors, and settings never change in place."""

    model_config = ConfigDict(extra="forbid", frozen=True)
