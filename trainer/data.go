package trainer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/features"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/preprocess"
	"github.com/dptrain/dptrain/rng"
)

// prepared is the data a run trains on, after limits and feature maps,
// with the privacy events of any private preprocessing.
type prepared struct {
	train, test *datasets.Dataset
	source      string
	prefix      []accountant.Event // private preprocessing, composed before step 1
	notes       []string
	// privNotes are curator-only notes (private/summary.json): facts of
	// this machine's run, such as whether the feature cache held the
	// training features.
	privNotes []string
	// pre is the sensitivity of the non-private preprocessing (nil: none).
	pre *preprocess.Sensitivity
	// transforms are the steps applied to every record, as model.bin
	// records them for predict (public or privately released statistics).
	transforms []models.Transform
	// digest identifies the data as read (before any preprocessing);
	// released are the statistics released from them before training, and
	// resumed the checkpoint's, which a resumed run reuses (nil: a fresh
	// run). See resumedata.go.
	digest   DataDigest
	released releasedStats
	resumed  *releasedStats
}

// loadData loads and prepares the data; root is the run's root random
// stream, from which the noise of any private preprocessing is derived.
// On a resume, resume is the checkpoint's record of the data: data that
// differ from it are refused (ErrDataChanged), and its released statistics
// are reused.
func loadData(cfg *Config, root *rng.Stream, train, test *datasets.Dataset, resume *dataRecord) (*prepared, error) {
	l, src, err := loadNamed(cfg.Dataset, cfg)
	if cfg.Dataset == InMemory {
		l, src, err = inMemory(train, test)
	}
	if err != nil {
		return nil, err
	}
	p := &prepared{train: l.Train, test: l.Test, source: src}
	if cfg.TrainLimit > 0 && cfg.TrainLimit < p.train.N() {
		p.train = p.train.Subset(seq(cfg.TrainLimit))
	}
	if cfg.TestLimit > 0 && cfg.TestLimit < p.test.N() {
		p.test = p.test.Subset(seq(cfg.TestLimit))
	}
	if err := p.train.CheckFinite(); err != nil {
		return nil, fmt.Errorf("dataset %s (train): %w", cfg.Dataset, err)
	}
	if err := p.test.CheckFinite(); err != nil {
		return nil, fmt.Errorf("dataset %s (test): %w", cfg.Dataset, err)
	}
	trainFile, testFile := dataFiles(cfg, src)
	p.digest = DigestData(p.train, p.test, trainFile, testFile)
	if resume != nil {
		if err := resume.Digest.Check(p.digest); err != nil {
			return nil, err
		}
		p.resumed = &resume.Released
	}
	if cfg.Features == FeaturesScatterNet {
		if err := applyScatterNet(cfg, p, root); err != nil {
			return nil, err
		}
		p.transforms = append(p.transforms, models.Transform{Type: "withheld", Name: "scatternet features"})
	}
	switch {
	case cfg.Scale != ScaleNone:
		if err := applyScale(cfg, p, root); err != nil {
			return nil, err
		}
	case cfg.Preprocess != PreprocessNone:
		if err := applyNonPrivate(cfg, p); err != nil {
			return nil, err
		}
	case cfg.DPSGDF:
		if err := applyDPSGDF(cfg, p, root); err != nil {
			return nil, err
		}
	case cfg.FeatureCF > 0:
		// Record-local normalisation (paper 001's DP-SGD baseline): no
		// privacy cost, each record is rescaled on its own.
		norm := preprocess.Normalize{C: cfg.FeatureCF}
		for _, ds := range []**datasets.Dataset{&p.train, &p.test} {
			x := append([]float32(nil), (*ds).X...)
			norm.ApplyInPlace32(x, (*ds).N(), (*ds).Dim())
			*ds = withFeatures(*ds, x)
		}
		p.notes = append(p.notes, fmt.Sprintf("features normalised to L2 norm %g per record (no privacy cost)", cfg.FeatureCF))
		p.transforms = append(p.transforms, models.Transform{Type: "l2_normalize", C: cfg.FeatureCF})
	case cfg.Features == FeaturesRaw:
		if w := scaleAdvice(p.test); w != "" {
			p.notes = append(p.notes, w)
		}
	}
	return p, nil
}

// DefaultFeatureCache is where ScatterNet features are cached when the
// configuration names no directory: the user's cache directory.
func DefaultFeatureCache() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "dptrain", "features")
}

// loadNamed loads the dataset called name, a Config.Dataset or a
// Config.PublicData (cfg supplies the data directory and the synthetic
// generator's seed).
func loadNamed[N ~string](name N, cfg *Config) (*datasets.Loaded, string, error) {
	var (
		l   *datasets.Loaded
		src string
		err error
	)
	switch Dataset(name) {
	case DatasetCSV, DatasetFolder:
		l, src, err = loadUserData(cfg)
	case DatasetNPY:
		l, src, err = loadNPYData(cfg)
	case DatasetEmbedded:
		l, err = datasets.Embedded()
		src = "embedded Fashion-MNIST subset"
	case DatasetSynthetic:
		g := datasets.GaussianMixture{N: 6000, K: 10, D: 32, Sep: 4, Seed: cfg.Seed}
		var all *datasets.Dataset
		all, err = g.Generate()
		if err == nil {
			tr, te := all.Split(5.0/6, cfg.Seed)
			l = &datasets.Loaded{Train: tr, Test: te}
		}
		src = "synthetic Gaussian mixture (10 classes, 32 dims)"
	default:
		var s datasets.Source
		l, s, err = datasets.Load(string(name), datasets.Options{Dir: cfg.DataDir})
		src = s.String()
	}
	if err != nil {
		return nil, "", fmt.Errorf("dataset %s: %w", name, err)
	}
	return l, src, nil
}

// applyDPSGDF centres the features privately (paper 001, Algorithm 3: the
// experiments' variant) and records the private mean's event.
func applyDPSGDF(cfg *Config, p *prepared, root *rng.Stream) error {
	if cfg.DPSGDFVariant == DPSGDFTheory {
		return applyDPSGDFTheory(cfg, p, root)
	}
	n, d := p.train.N(), p.train.Dim()
	f := preprocess.DPSGDF{Variant: preprocess.Practical, EpsF: cfg.FeatureEps, CF: cfg.FeatureCF, Delta: cfg.Delta}
	// A child of the root: seeded runs draw what they always drew, and a
	// resumed crypto-seeded run recomputes the same private mean instead of
	// releasing a second one.
	noise := root.Child("dpsgdf")
	// In place on float32 copies: the float64 path of Fit would hold several
	// copies of a large feature matrix (ScatterNet CIFAR-10: 3 GB each).
	trainX := append([]float32(nil), p.train.X...)
	cen, events, err := f.FitInPlace32(trainX, n, d, noise)
	if err != nil {
		return fmt.Errorf("dpsgdf: %w", err)
	}
	if cen, err = reuseCentering(p, cen, d); err != nil {
		return err
	} else if p.resumed != nil {
		// The checkpoint's mean, released before: the fresh one is dropped.
		trainX = append(trainX[:0], p.train.X...)
		if err := cen.ApplyInPlace32(trainX, n, d); err != nil {
			return fmt.Errorf("dpsgdf: %w", err)
		}
	}
	p.released.DPSGDF = cen
	testX := append([]float32(nil), p.test.X...)
	if err := cen.ApplyInPlace32(testX, p.test.N(), d); err != nil {
		return fmt.Errorf("dpsgdf: %w", err)
	}
	p.train = withFeatures(p.train, trainX)
	p.test = withFeatures(p.test, testX)
	p.prefix = append(p.prefix, events...)
	// The mean is released by the Gaussian mechanism of events: public.
	p.transforms = append(p.transforms, models.Transform{Type: "center", C: cen.NormC, Mean: cen.Mu})
	p.notes = append(p.notes, fmt.Sprintf("DPSGD-F: features normalised to C_F=%g and privately centred with ε_F=%g (Algorithm 3)", cfg.FeatureCF, cfg.FeatureEps))
	return nil
}

// applyScale clips every record to the declared feature bounds and scales
// it: by the bounds (minmax, free) or by a privately released mean and std
// whose Gaussian event joins the prefix (docs/tabular.md). model.bin keeps
// the bounds and the released statistics, all public.
func applyScale(cfg *Config, p *prepared, root *rng.Stream) error {
	d := p.train.Dim()
	if len(p.train.Shape) != 1 {
		return fmt.Errorf("%w: scale %s: needs tabular features; dataset %s has shape %v", ErrInvalidConfig, cfg.Scale, p.train.Name, p.train.Shape)
	}
	b, err := preprocess.ParseFeatureBounds(cfg.FeatureBounds, d)
	if err != nil {
		// Bounds the user typed (a count, an order, a file): bad input.
		return fmt.Errorf("%w: scale %s: %w", ErrInvalidConfig, cfg.Scale, err)
	}
	t := models.Transform{Type: "clip_scale", Lo: b.Lo, Hi: b.Hi}
	p.notes = append(p.notes, clipReport(p.test, b))
	var note string
	switch cfg.Scale {
	case ScaleMinMax:
		t.Mean, t.Scale = b.MinMax()
		note = "features clipped to the declared bounds and scaled to [0, 1] by them (data-independent, no privacy cost)"
	case ScaleStandardize:
		sigma, how := cfg.ScaleSigma, "declared"
		if sigma == 0 {
			frac := cfg.ScaleEpsFraction
			if frac == 0 {
				frac = 0.1
			}
			if sigma, err = preprocess.ScaleSigma(frac, cfg.Epsilon, cfg.Delta); err != nil {
				return fmt.Errorf("scale standardize: %w", err)
			}
			how = fmt.Sprintf("%g of ε=%g alone", frac, cfg.Epsilon)
		}
		// A child of the root: a resumed run recomputes the same release.
		st, ev, err := preprocess.BoundedStandardizer{Bounds: b, Sigma: sigma}.Fit(p.train.X, p.train.N(), d, root.Child("scale"))
		if err != nil {
			return fmt.Errorf("scale standardize: %w", err)
		}
		rel := &standardizeStats{Mean: st.Mean, Std: st.Std, NoiseStd: st.NoiseStd}
		if old, err := storedStat(p, "standardisation statistics", func(r *releasedStats) *standardizeStats { return r.Standardize },
			func(s *standardizeStats) int { return min(len(s.Mean), len(s.Std)) }, d); err != nil {
			return fmt.Errorf("scale standardize: %w", err)
		} else if old != nil {
			rel = old // released before the checkpoint: reused, never redrawn
		}
		p.released.Standardize = rel
		t.Mean, t.Scale = rel.Mean, rel.Std
		p.prefix = append(p.prefix, ev)
		note = fmt.Sprintf("features clipped to the declared bounds and standardised by a private mean and std (Gaussian, noise multiplier σ = %.4g (%s), noise std %.4g on each sum; composed into the account)", sigma, how, rel.NoiseStd)
		if w := noiseAdvice(p.test, b, rel.NoiseStd, p.train.N()); w != "" {
			p.notes = append(p.notes, w)
		}
	default:
		return fmt.Errorf("unknown scale %q", cfg.Scale)
	}
	for _, ds := range []**datasets.Dataset{&p.train, &p.test} {
		x := append([]float32(nil), (*ds).X...)
		if err := models.ApplyTransforms([]models.Transform{t}, x, (*ds).N(), d); err != nil {
			return fmt.Errorf("scale %s: %w", cfg.Scale, err)
		}
		*ds = withFeatures(*ds, x)
	}
	p.transforms = append(p.transforms, t)
	p.notes = append(p.notes, note)
	return nil
}

// applyNonPrivate fits a data-dependent preprocessing on the training set,
// applies it to both splits with the training statistics, and records its
// declared sensitivity for the SRDP accountant. Records are first scaled
// by the public constant 1/√d·(1/max pixel) so they lie in the unit ball,
// the instance space the sensitivities are stated for.
func applyNonPrivate(cfg *Config, p *prepared) error {
	n, d := p.train.N(), p.train.Dim()
	scale := 1 / math.Sqrt(float64(d)) // pixels in [0,1]: ‖x‖ ≤ √d
	if p.train.Shape != nil && len(p.train.Shape) == 1 {
		scale = 1 // tabular data: assumed already in the unit ball (checked below)
	}
	scaled := func(ds *datasets.Dataset) *mat.Dense {
		x := make([]float32, len(ds.X))
		for i, v := range ds.X {
			x[i] = v * float32(scale)
		}
		return preprocess.FromFloat32(x, ds.N(), d)
	}
	var step preprocess.Step
	b := preprocess.Bounds{N: n, D: d, AddRemove: true}
	switch cfg.Preprocess {
	case PreprocessPCA:
		step = preprocess.PCA{K: cfg.PCAK, Dim: cfg.PCADim}
		b.EigenGapMin, b.TopGapMin = cfg.EigenGapMin, cfg.EigenGapMin
	case PreprocessStandardize:
		step = preprocess.StandardScaler{}
		b.SigmaMin = cfg.SigmaMin
	default:
		return fmt.Errorf("unknown preprocess %q", cfg.Preprocess)
	}
	Xtr := scaled(p.train)
	outside := 0
	for i := 0; i < n; i++ {
		if mat.Norm(Xtr.RowView(i), 2) > 1+1e-6 {
			outside++
		}
	}
	if outside > 0 {
		// Neither the record nor its norm is named: a refusal message is
		// read, logged and pasted, and it is not covered by ε.
		return fmt.Errorf("preprocess %s: %d training record(s) lie outside the unit L2 ball after scaling; the sensitivities need every record inside it (scale by a public bound)", cfg.Preprocess, outside)
	}
	pipe := preprocess.Pipeline{Steps: []preprocess.Step{step}}
	sens, err := pipe.Sensitivity(b)
	if err != nil {
		return fmt.Errorf("preprocess %s: %w", cfg.Preprocess, err)
	}
	fitted, res, err := pipe.Fit(Xtr)
	if err != nil {
		return fmt.Errorf("preprocess %s: %w", cfg.Preprocess, err)
	}
	Xte, err := fitted.Transform(scaled(p.test))
	if err != nil {
		return fmt.Errorf("preprocess %s (test set): %w", cfg.Preprocess, err)
	}
	p.train = withFeatures(p.train, preprocess.ToFloat32(res.X))
	p.test = withFeatures(p.test, preprocess.ToFloat32(Xte))
	p.pre = &sens
	// Statistics fitted on the training data are not released in model.bin.
	p.transforms = append(p.transforms, models.Transform{Type: "withheld", Name: string(cfg.Preprocess)})
	p.notes = append(p.notes, fmt.Sprintf("non-private %s fitted on the training data (Δ2 = %.3g, Δ∞ = %g, %s); accounted by SRDP", cfg.Preprocess, sens.L2, sens.LInf, sens.Formula))
	return nil
}

// applyScatterNet replaces the images by their scattering features (data-
// independent, cached on disk) and normalises them, per example at no cost,
// or with private channel statistics whose Gaussian event joins the account.
func applyScatterNet(cfg *Config, p *prepared, root *rng.Stream) error {
	if len(p.train.Shape) != 3 {
		return fmt.Errorf("features scatternet needs images; dataset %s has shape %v", p.train.Name, p.train.Shape)
	}
	shape := [3]int{p.train.Shape[0], p.train.Shape[1], p.train.Shape[2]}
	dir := cfg.FeatureCache
	if dir == "" {
		dir = DefaultFeatureCache()
	}
	// Features of private images are private: 0700 (files 0600).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("feature cache: %w", err)
	}
	fcfg := features.DefaultConfig()
	transform := func(ds *datasets.Dataset) (*datasets.Dataset, []int, bool, error) {
		x, fshape, hit, err := features.LoadOrCompute(dir, ds.X, ds.N(), shape, fcfg)
		if err != nil {
			return nil, nil, false, fmt.Errorf("scatternet %s: %w", ds.Name, err)
		}
		c := *ds
		c.X, c.Shape = x, fshape
		return &c, fshape, hit, nil
	}
	train, fshape, hit1, err := transform(p.train)
	if err != nil {
		return err
	}
	test, _, hit2, err := transform(p.test)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("ScatterNet features (%s, %v per image; data-independent, no privacy cost)", fcfg, fshape)
	// Whether the training features were cached says whether this training
	// set was seen before on this machine: the curator's, never released.
	p.privNotes = append(p.privNotes, fmt.Sprintf("ScatterNet feature cache %s: training features cached %v, test features cached %v", dir, hit1, hit2))
	switch cfg.FeatureNorm {
	case FeatureNormGroup:
		for _, ds := range []*datasets.Dataset{train, test} {
			if err := features.GroupNormalize(ds.X, ds.N(), fshape, cfg.FeatureGroups, 1e-5); err != nil {
				return fmt.Errorf("scatternet normalisation: %w", err)
			}
		}
		note += fmt.Sprintf(", group-normalised per example (%d groups, no privacy cost)", cfg.FeatureGroups)
	case FeatureNormPrivate:
		sc, err := features.NewScattering(shape[1], shape[2], fcfg)
		if err != nil {
			return err
		}
		st, err := features.PrivateChannelStats(train.X, train.N(), fshape, features.PrivateStatsConfig{
			Clip: cfg.FeatureNormClip, Sigma: cfg.FeatureNormSigma,
			ChannelScale: features.ReferenceScales(sc, shape[0], 64, 1),
		}, root.Child("feature-stats"))
		if err != nil {
			return fmt.Errorf("scatternet private statistics: %w", err)
		}
		if old, err := storedStat(p, "ScatterNet channel statistics", func(r *releasedStats) *features.ChannelStats { return r.ScatterNet },
			func(s *features.ChannelStats) int { return min(len(s.Mean), len(s.Std)) }, len(st.Stats.Mean)); err != nil {
			return fmt.Errorf("scatternet private statistics: %w", err)
		} else if old != nil {
			st.Stats = *old // released before the checkpoint: reused, never redrawn
		}
		p.released.ScatterNet = &st.Stats
		st.Stats.Apply(train.X, train.N(), fshape)
		st.Stats.Apply(test.X, test.N(), fshape)
		p.prefix = append(p.prefix, st.Event)
		note += fmt.Sprintf(", normalised by private channel statistics (Gaussian, σ = %g, clip %g; composed into the account)", cfg.FeatureNormSigma, cfg.FeatureNormClip)
	}
	p.train, p.test = train, test
	p.notes = append(p.notes, note)
	return nil
}

// withFeatures returns a shallow copy of d with its features replaced.
func withFeatures(d *datasets.Dataset, x []float32) *datasets.Dataset {
	c := *d
	c.X = x
	c.Shape = []int{len(x) / d.N()}
	return &c
}

func seq(n int) []int { return seqFrom(0, n) }

// seqFrom is lo, lo+1, …, hi−1.
func seqFrom(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

// applyDPSGDFTheory runs paper 001's Algorithm 2: a private mean and a
// private quantile τ of the distances to it, each at the ρ-zCDP that
// Theorem 1's budget split assigns from the run's (ε, δ), then features
// (x − μ̂, τ) clipped to √2·τ. Their events join the account before the
// DP-SGD steps, whose noise is then calibrated for what is left of ε (by
// RDP composition, which is at least as tight as the paper's ε/3 split).
func applyDPSGDFTheory(cfg *Config, p *prepared, root *rng.Stream) error {
	f := preprocess.DPSGDF{Variant: preprocess.Theory, Epsilon: cfg.Epsilon, Delta: cfg.Delta, R: cfg.FeatureCF}
	res, err := f.Fit(preprocess.FromFloat32(p.train.X, p.train.N(), p.train.Dim()), root.Child("dpsgdf"))
	if err != nil {
		return fmt.Errorf("dpsgdf (theory): %w", err)
	}
	if cen, err := reuseCentering(p, res.Centering, p.train.Dim()); err != nil {
		return err
	} else if p.resumed != nil {
		// The checkpoint's mean and τ, released before: the fresh ones
		// are dropped.
		res.Centering = cen
		res.X = cen.Transform(preprocess.FromFloat32(p.train.X, p.train.N(), p.train.Dim()))
	}
	p.released.DPSGDF = res.Centering
	p.train = withFeatures(p.train, preprocess.ToFloat32(res.X))
	p.test = withFeatures(p.test, preprocess.ToFloat32(res.Centering.Transform(preprocess.FromFloat32(p.test.X, p.test.N(), p.test.Dim()))))
	p.prefix = append(p.prefix, res.Events...)
	p.transforms = append(p.transforms, models.Transform{Type: "withheld", Name: "dpsgdf theory centring"})
	p.notes = append(p.notes, fmt.Sprintf("DPSGD-F (Algorithm 2): private mean and quantile τ = %.4g at ρ = %.3g-zCDP each (R = %g), features (x − μ̂, τ) clipped to √2τ", res.Centering.Tau, res.Budget.Rho, cfg.FeatureCF))
	return nil
}

// reuseCentering is DPSGD-F's released centring: the checkpoint's on a
// resume (which must be of the same variant and d features), else fresh.
func reuseCentering(p *prepared, fresh *preprocess.Centering, d int) (*preprocess.Centering, error) {
	old, err := storedStat(p, "DPSGD-F centring", func(r *releasedStats) *preprocess.Centering { return r.DPSGDF },
		func(c *preprocess.Centering) int { return len(c.Mu) }, d)
	switch {
	case err != nil:
		return nil, fmt.Errorf("dpsgdf: %w", err)
	case old == nil:
		return fresh, nil
	case (old.Tau > 0) != (fresh.Tau > 0) || old.NormC != fresh.NormC:
		return nil, fmt.Errorf("dpsgdf: %w: the checkpoint's centring is of another variant", ErrInvalidConfig)
	}
	return old, nil
}

// dataFiles names where each split was read from, for the data's digest
// and for messages: the configured files, the data directory, or the
// dataset's source.
func dataFiles(cfg *Config, src string) (train, test string) {
	switch cfg.Dataset {
	case DatasetCSV, DatasetNPY:
		return cfg.TrainFile, cfg.TestFile
	case DatasetFolder:
		return filepath.Join(cfg.DataDir, "train"), filepath.Join(cfg.DataDir, "test")
	case InMemory:
		return "Options.Train", "Options.Test"
	}
	return fmt.Sprintf("%s training split (%s)", cfg.Dataset, src), fmt.Sprintf("%s test split (%s)", cfg.Dataset, src)
}
