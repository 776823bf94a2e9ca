"""The fake kubelet's simulated node agents, and NVIDIA's own config parsing (nvidia/) they run."""
