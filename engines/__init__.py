"""Machine side of Curator: miners that find candidates and labelers that pre-label them."""
