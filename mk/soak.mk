# The soak (docs/robustness.md), not part of `make test`: a release binary runs 1,000,000 echo
# intents on one sandbox, then 100,000 intents failing six ways in turn, and fails when the
# process RSS grew by 1 MiB or more after the warm-up of either phase.
#
#   make soak                                   the full run (about a minute on 2 cores)
#   make soak SOAK_ARGS="100000 10000"          fewer intents (echo, failing)

# Keep the including Makefile's default goal: this fragment's rules must not become it.
soak_saved_goal := $(.DEFAULT_GOAL)

.PHONY: soak

SOAK_ARGS ?=

soak:
	$(CARGO) run --release -q -p contour-benches --bin soak -- $(SOAK_ARGS)

.DEFAULT_GOAL := $(soak_saved_goal)
