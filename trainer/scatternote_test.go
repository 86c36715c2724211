package trainer

import (
	"path/filepath"
	"strings"
	"testing"
)

// Whether the ScatterNet cache held the training features says whether
// this training set was seen on this machine before (issue 37, finding 9):
// private/summary.json says it, release/summary.json does not, on a miss
// and on a hit alike.
func TestScatterNetCacheNoteIsPrivate(t *testing.T) {
	c := small(t)
	c.Dataset, c.TrainLimit, c.TestLimit = "embedded", 60, 30
	c.Model, c.Hidden, c.Features, c.FeatureCache = "logreg", nil, FeaturesScatterNet, t.TempDir()
	c.BatchSize, c.Steps, c.EvalEvery, c.CheckpointEvery, c.KeepCheckpoint = 20, 2, 0, 0, false
	for _, hit := range []string{"false", "true"} {
		c.OutDir = t.TempDir()
		run(t, c, Options{})
		rel := string(readFile(t, filepath.Join(c.OutDir, "release", "summary.json")))
		priv := string(readFile(t, filepath.Join(c.OutDir, "private", "summary.json")))
		// (The configuration's feature_cache is the user's setting, echoed.)
		if !strings.Contains(rel, "ScatterNet features") || strings.Contains(rel, "cached") || strings.Contains(rel, "hits") || strings.Contains(rel, "cache "+c.FeatureCache) {
			t.Errorf("release/summary.json (cache hit %s) tells of the cache:\n%s", hit, rel)
		}
		if !strings.Contains(priv, "training features cached "+hit) {
			t.Errorf("private/summary.json does not say the training features were cached %s:\n%s", hit, priv)
		}
	}
}
