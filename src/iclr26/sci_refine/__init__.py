"""Eigen-1 ("Adaptive Multi-Agent Refinement with Monitor-Based RAG for Scientific Reasoning", ICLR 2026,
arXiv 2509.21193): implicit retrieval by a Monitor / Querier / Injector stack watching the main model's
stream, hierarchical solution refinement (HSR) and quality-aware iterative reasoning (QAIR), against
explicit tool-call RAG. In progress (issue 26)."""
