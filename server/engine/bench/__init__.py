"""`tritonlens bench`: the optimize loop over a folder of KernelBench-form tasks, with baselines (PyTorch eager,
torch.compile), resumable state and a report of the whole speedup distribution."""
