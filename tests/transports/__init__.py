"""Transports over their real wire: the HTTP client's own connections against raw and real servers."""
