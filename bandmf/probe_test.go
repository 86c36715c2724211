package bandmf

import (
	"testing"
	"time"

	"github.com/dptrain/dptrain/accountant"
)

func TestProbeMMCC(t *testing.T) {
	s, _ := NewStrategy([]float64{1, 0.888, 0.838, 0.776})
	p := 256.0 / 60000
	for _, sigma := range []float64{3, 1.5} {
		m, _ := NewMMCC(s, 235, p, 1e-6)
		for _, h := range []float64{1e-4, 1e-3} {
			t0 := time.Now()
			a, _ := accountant.NewPLD(accountant.WithPLDInterval(h))
			a.Compose(m.Event(sigma, 235), 1)
			b, err := a.Epsilon(1e-5)
			t.Logf("sigma %v h %v eps %v %v %v", sigma, h, b.Epsilon, err, time.Since(t0))
		}
	}
}
