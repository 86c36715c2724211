package preprocess

import (
	"testing"

	"github.com/dptrain/dptrain/rng"
)

func BenchmarkPCAFit(b *testing.B) {
	X := randomMatrix(rng.New(1), 2000, 100, 1)
	b.ResetTimer()
	for range b.N {
		if _, _, err := (PCA{K: 10}).FitTransform(X, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPCAWide fits PCA{K: 10} on wide data (n = 500, d = 3000) by
// both paths; the covariance path takes about a minute, so run it once:
//
//	go test -run XXX -bench PCAWide -benchtime 1x ./preprocess/
func BenchmarkPCAWide(b *testing.B) {
	X := randomMatrix(rng.New(1), 500, 3000, 1)
	for _, c := range []struct {
		name   string
		method pcaMethod
	}{{"gram", pcaGram}, {"covariance", pcaCovariance}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, _, err := (PCA{K: 10}).fit(X, nil, c.method); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGoodClusters(b *testing.B) {
	X := randomMatrix(rng.New(1), 1000, 10, 1)
	b.ResetTimer()
	for range b.N {
		GoodClusters(X, nil, 0.05)
	}
}

func BenchmarkAdaptiveMean(b *testing.B) {
	X := randomMatrix(rng.New(1), 10000, 20, 1)
	s := rng.New(2)
	for range b.N {
		if _, _, err := (AdaptiveMean{R: 1, Rho: 0.01}).Estimate(X, s); err != nil {
			b.Fatal(err)
		}
	}
}
