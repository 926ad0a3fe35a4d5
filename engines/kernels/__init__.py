"""OpenCL kernel mining: scrape, shim, rejection filter, rewriter, features, dynamic checker."""
