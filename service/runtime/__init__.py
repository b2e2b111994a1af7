"""Models in memory: one loaded version (`runner`, its optimised twin in `compiled`, its
input/output `signature`), the registry of loaded versions, dynamic `batching`, op-hook
`inspection`, `summary` tables, Triton `stats`, Prometheus `metrics` and the BLAS/thread
policy (`threads`). Reads the repository; knows nothing of HTTP."""
