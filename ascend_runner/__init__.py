"""Runners: worker processes that compile, run and profile kernels in their own Python environments."""
