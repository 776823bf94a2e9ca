from gpustack.cli import run

run()
