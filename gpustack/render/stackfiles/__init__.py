"""stackfiles."""
