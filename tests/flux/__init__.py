"""The Flux tier: rendered Flux objects checked by Flux's own code (its API types, its CRDs in a real API
server) and the order their dependsOn graph gives.
"""
