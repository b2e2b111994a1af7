# the alias package is the upstream run's `mxnet`, not a test module of ours
collect_ignore_glob = ["alias/*"]
