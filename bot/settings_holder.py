"""The config in force; replaced as a whole when a valid edit is applied."""

from dataclasses import dataclass

from core.config import Settings


@dataclass
class SettingsHolder:
    current: Settings
