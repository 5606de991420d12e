import config


def connect_timeout_seconds():
    """How long a connection may take, in seconds."""
    return config.TIMEOUT_MS
