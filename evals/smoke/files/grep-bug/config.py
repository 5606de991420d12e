# Times are in milliseconds.
TIMEOUT_MS = 5000
RETRIES = 3
