"""Typed memories of characters (seed 004) and their consolidation (seed 001's insights)."""
