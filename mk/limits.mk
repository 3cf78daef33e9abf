# Promise 8's flood and load cases through the release `tdm`, each with its wall time and peak
# RSS (SECURITY.md, docs/ABI.md); not part of `make test`, whose tests hold the verdicts.
#
#   make limits-figures

# Keep the including Makefile's default goal: this fragment's rules must not become it.
limits_saved_goal := $(.DEFAULT_GOAL)

.PHONY: limits-figures

limits-figures: build
	bash mk/limits-figures.sh $(TDM)

.DEFAULT_GOAL := $(limits_saved_goal)
