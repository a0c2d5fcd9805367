"""Decisions: pure functions from observations and the previous state to the next state."""
