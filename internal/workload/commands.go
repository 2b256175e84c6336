package workload

import (
	"fmt"
	"math/rand/v2"
)

var (
	pkgs    = []string{"core", "utils", "io", "parser", "models", "api", "cli", "config", "schema", "client"}
	mods    = []string{"base", "reader", "writer", "format", "session", "cache", "types", "compat", "validate", "render"}
	deps    = []string{"numpy", "requests", "pyyaml", "lxml", "attrs", "pytest-xdist", "hypothesis", "cython"}
	aptPkgs = []string{"libxml2-dev", "build-essential", "libffi-dev", "graphviz"}
	// science: datasets and analysis steps typical of ScienceAgentBench tasks.
	datasets = []string{"clintox.csv", "bace.csv", "pbmc3k.h5ad", "elevation.tif", "eeg_subject01.fif", "mof_adsorption.csv", "toxcast.csv"}
	sciSteps = []string{"preprocess", "train_model", "featurize", "cluster", "plot_results", "evaluate", "fit_regression"}
)

// commandFor renders a realistic command text for an action class.
func commandFor(kind, class string, r *rand.Rand) string {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	p, m := pick(pkgs), pick(mods)
	if kind == KindScience {
		switch class {
		case "run":
			return fmt.Sprintf("python pred_programs/%s.py --data benchmark/datasets/%s --out pred_results/", pick(sciSteps), pick(datasets))
		case "read", "edit":
			return fmt.Sprintf("pred_programs/%s.py", pick(sciSteps))
		case "install":
			return "pip install " + pick([]string{"scanpy", "rdkit", "deepchem", "mne", "rasterio", "scikit-learn", "geopandas"})
		}
	}
	switch class {
	case "test":
		return pick([]string{
			fmt.Sprintf("cd /testbed && python -m pytest tests/test_%s.py -x -q", m),
			fmt.Sprintf("cd /testbed && python -m pytest %s/tests -q -k %s", p, m),
			fmt.Sprintf("tox -e py311 -- tests/%s", p),
		})
	case "install":
		return pick([]string{"cd /testbed && pip install -e .", "pip install -q " + pick(deps), "apt-get install -y " + pick(aptPkgs)})
	case "build":
		return pick([]string{"cd /testbed && make -j2", "python setup.py build_ext --inplace", "cmake --build build -j2"})
	case "run":
		return pick([]string{
			fmt.Sprintf("cd /testbed && python reproduce_%s.py", m),
			fmt.Sprintf("python -c 'import %s.%s as x; print(x.__doc__)'", p, m),
		})
	case "bash":
		return pick([]string{"cd /testbed && git diff", "cd /testbed && git status", "ls -la /testbed/" + p, "find /testbed -name '*" + m + "*.py' | head"})
	case "read", "edit":
		return fmt.Sprintf("/testbed/%s/%s.py", p, m)
	case "search":
		return pick([]string{fmt.Sprintf("def %s /testbed/%s", m, p), fmt.Sprintf("**/*%s*.py", m)})
	}
	return class
}
