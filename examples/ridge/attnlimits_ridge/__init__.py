"""An example plug-in result of attnlimits: ridge regression on isotropic Gaussian data (docs/extending.md)."""
