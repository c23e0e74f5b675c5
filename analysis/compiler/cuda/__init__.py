"""Levels 3-4 on NVIDIA targets: the TL3xx checks over Triton's CUDA stages."""
