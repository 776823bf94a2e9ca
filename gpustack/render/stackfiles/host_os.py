"""The OS release the apt host steps are written for, and the vendor repositories they add.

Ubuntu 24.04 LTS (noble), amd64: NVIDIA's CUDA repository has a tree per release
(``ubuntu2404``: https://developer.download.nvidia.com/compute/cuda/repos/), Docker's repository a
suite per codename (``noble``: ``DOCKER_INSTALL``). Ubuntu's own
archive is used for nothing the steps pin: its ``containerd`` is 1.7 on 22.04 and 24.04, and its
driver packages lose a release once a newer one supersedes it.
"""

from __future__ import annotations

NAME = "Ubuntu 24.04 LTS"
CODENAME = "noble"
CUDA_REPOSITORY = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/"
DOCKER_REPOSITORY = "https://download.docker.com/linux/ubuntu"
DOCKER_INSTALL = "https://docs.docker.com/engine/install/ubuntu/"
