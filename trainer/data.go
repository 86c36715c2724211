package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/internal/rng"
	"github.com/dptrain/dptrain/preprocess"
)

// prepared is the data a run trains on, after limits and feature maps,
// with the privacy events of any private preprocessing.
type prepared struct {
	train, test *datasets.Dataset
	source      string
	prefix      []accountant.Event // private preprocessing, composed before step 1
	notes       []string
}

func loadData(cfg *Config) (*prepared, error) {
	var (
		l   *datasets.Loaded
		src string
		err error
	)
	switch cfg.Dataset {
	case "embedded":
		l, err = datasets.Embedded()
		src = "embedded Fashion-MNIST subset"
	case "synthetic":
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
		l, s, err = datasets.Load(cfg.Dataset, datasets.Options{Dir: cfg.DataDir})
		src = s.String()
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", cfg.Dataset, err)
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
	switch {
	case cfg.DPSGDF:
		if err := applyDPSGDF(cfg, p); err != nil {
			return nil, err
		}
	case cfg.FeatureCF > 0:
		// Record-local normalisation (paper 001's DP-SGD baseline): no
		// privacy cost, each record is rescaled on its own.
		norm := preprocess.Normalize{C: cfg.FeatureCF}
		p.train = withFeatures(p.train, preprocess.ToFloat32(norm.Transform(preprocess.FromFloat32(p.train.X, p.train.N(), p.train.Dim()))))
		p.test = withFeatures(p.test, preprocess.ToFloat32(norm.Transform(preprocess.FromFloat32(p.test.X, p.test.N(), p.test.Dim()))))
		p.notes = append(p.notes, fmt.Sprintf("features normalised to L2 norm %g per record (no privacy cost)", cfg.FeatureCF))
	}
	return p, nil
}

// applyDPSGDF centres the features privately (paper 001, Algorithm 3: the
// experiments' variant) and records the private mean's event.
func applyDPSGDF(cfg *Config, p *prepared) error {
	n, d := p.train.N(), p.train.Dim()
	f := preprocess.DPSGDF{Variant: preprocess.Practical, EpsF: cfg.FeatureEps, CF: cfg.FeatureCF, Delta: cfg.Delta}
	noise := rng.NewSeeded(cfg.Seed).Child("dpsgdf")
	if !cfg.Seeded {
		var err error
		if noise, err = rng.NewCrypto(); err != nil {
			return err
		}
	}
	res, err := f.Fit(preprocess.FromFloat32(p.train.X, n, d), noise)
	if err != nil {
		return fmt.Errorf("dpsgdf: %w", err)
	}
	if res.Centering.OutDim(d) != d {
		return fmt.Errorf("dpsgdf: feature map changes the dimension (%d -> %d); only the practical variant is wired into training", d, res.Centering.OutDim(d))
	}
	p.train = withFeatures(p.train, preprocess.ToFloat32(res.X))
	p.test = withFeatures(p.test, preprocess.ToFloat32(res.Centering.Transform(preprocess.FromFloat32(p.test.X, p.test.N(), d))))
	p.prefix = append(p.prefix, res.Events...)
	p.notes = append(p.notes, fmt.Sprintf("DPSGD-F: features normalised to C_F=%g and privately centred with ε_F=%g (Algorithm 3)", cfg.FeatureCF, cfg.FeatureEps))
	return nil
}

// withFeatures returns a shallow copy of d with its features replaced.
func withFeatures(d *datasets.Dataset, x []float32) *datasets.Dataset {
	c := *d
	c.X = x
	c.Shape = []int{len(x) / d.N()}
	return &c
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
