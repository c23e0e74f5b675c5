"""Levels 3-4 on Ascend targets: the TL4xx checks over triton-ascend's stages."""
