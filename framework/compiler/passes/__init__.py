"""Graph passes: pure functions `(Symbol, params) -> (Symbol, params)`, one concept per module."""
