"""The on-disk model store shared by every replica: layout and atomic commits (`store`), the
manifest and its lock (`manifest`), who owns leftover files (`owner`), startup clean-up
(`recovery`), model configuration (`config`) and the crash points of the fault tests
(`faults`). Knows nothing of loaded models or HTTP."""
