//! rein's agent: the loop, sessions, configuration and system prompt.
