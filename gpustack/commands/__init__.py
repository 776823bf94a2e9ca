"""One module per CLI command: each exposes a typed function; ``gpustack.cli`` registers them
(``options`` holds the options several commands share).

Modules here import only typer at top level, so that ``gpustack lint`` never pays for
render's dependencies (cdk8s, Node).
"""
