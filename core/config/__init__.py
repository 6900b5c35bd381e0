from core.config.load import ConfigError, decide_restart_only_changes, load_config, parse_config
from core.config.model import RoomSettings, Settings

__all__ = [
    "ConfigError",
    "RoomSettings",
    "Settings",
    "decide_restart_only_changes",
    "load_config",
    "parse_config",
]
