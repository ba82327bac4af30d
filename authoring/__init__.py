"""Authoring tools: turn the reference solution into the student files."""
