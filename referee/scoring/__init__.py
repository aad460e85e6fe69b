"""The statistics of results: Elo/BayesElo rating fits (ratings, ratingsio) and the
sequential probability ratio test (sprt). It may import rules and console (the
subpackages before it in README "Layout"), protocol and the standard library; nothing
after it."""
