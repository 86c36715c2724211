package trainer

import (
	"path/filepath"
	"strings"
)

// relativeTo rewrites path relative to the run directory outDir, so that a
// committed or published summary carries no absolute path of the machine it
// ran on. Empty paths stay empty; a path that cannot be made relative keeps
// only its base name.
func relativeTo(outDir, path string) string {
	if path == "" || !filepath.IsAbs(path) && outDir == "" {
		return path
	}
	absOut, err1 := filepath.Abs(outDir)
	absPath, err2 := filepath.Abs(path)
	if outDir == "" || err1 != nil || err2 != nil {
		return filepath.Base(path)
	}
	rel, err := filepath.Rel(absOut, absPath)
	if err != nil {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}

// portableConfig rewrites cfg's paths relative to its run directory.
func portableConfig(cfg Config) Config {
	out := cfg.OutDir
	cfg.DataDir = relativeTo(out, cfg.DataDir)
	cfg.TrainFile = relativeTo(out, cfg.TrainFile)
	cfg.TestFile = relativeTo(out, cfg.TestFile)
	cfg.FeatureCache = relativeTo(out, cfg.FeatureCache)
	return cfg
}

// portableText replaces, in s, each absolute path of cfg with its portable
// form (the summary's source line names the data directory).
func portableText(cfg Config, s string) string {
	if c := DefaultFeatureCache(); filepath.IsAbs(c) {
		s = strings.ReplaceAll(s, c, "the user cache directory's dptrain/features")
	}
	for _, p := range []string{cfg.DataDir, cfg.TrainFile, cfg.TestFile, cfg.FeatureCache} {
		if p != "" && filepath.IsAbs(p) {
			s = strings.ReplaceAll(s, p, relativeTo(cfg.OutDir, p))
		}
	}
	return s
}
