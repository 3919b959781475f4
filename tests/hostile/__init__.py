"""Hostile input: a corpus of cases run against real servers on every transport."""
