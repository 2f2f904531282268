"""MERT that drives any scorer through the line protocol: n-best lists, exact line search, the tuner."""
