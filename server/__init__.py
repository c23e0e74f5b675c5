"""Language server and command line front ends of tritonlens."""
