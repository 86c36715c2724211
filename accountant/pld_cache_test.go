package accountant

import (
	"math"
	"testing"
)

// A cached step is the one connect-the-dots builds, bit for bit, and the
// cache evicts the least recently used steps to stay within its points.
func TestStepCache(t *testing.T) {
	c := &stepCache{max: 0}
	keys := []pldKey{{pldMech{Q: 0.01, Sigma: 1}, 1e-3}, {pldMech{Q: 0.02, Sigma: 1.2}, 1e-3}, {pldMech{Q: 1, Sigma: 3}, 1e-3}}
	sizes := make([]int, len(keys))
	for i, k := range keys {
		p, err := c.get(k)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = len(p[0].p) + len(p[1].p)
		for d, remove := range []bool{true, false} {
			want, err := connectTheDots(gaussianDirection{q: k.m.Q, sigma: k.m.Sigma, remove: remove}, k.h)
			if err != nil {
				t.Fatal(err)
			}
			if p[d].lo != want.lo || len(p[d].p) != len(want.p) || math.Float64bits(p[d].inf) != math.Float64bits(want.inf) {
				t.Fatalf("%v dir %d: support or +∞ mass differs", k, d)
			}
			for j := range want.p {
				if math.Float64bits(p[d].p[j]) != math.Float64bits(want.p[j]) {
					t.Fatalf("%v dir %d: mass %d differs", k, d, j)
				}
			}
		}
	}
	if len(c.byKey) != 0 {
		t.Fatalf("a cache of 0 points holds %d steps", len(c.byKey))
	}
	// Room for the first two: the third evicts the least recently used.
	c = &stepCache{max: sizes[0] + sizes[1]}
	for _, i := range []int{0, 1, 0, 2} {
		if _, err := c.get(keys[i]); err != nil {
			t.Fatal(err)
		}
		if c.points > c.max {
			t.Fatalf("holds %d points, max %d", c.points, c.max)
		}
	}
	_, has0 := c.byKey[keys[0]]
	_, has1 := c.byKey[keys[1]]
	_, has2 := c.byKey[keys[2]]
	if has1 || (!has2 && sizes[2] <= c.max) || (!has0 && sizes[0]+sizes[2] <= c.max) {
		t.Errorf("after 0,1,0,2 the cache holds 0:%v 1:%v 2:%v; want the least recent (1) evicted", has0, has1, has2)
	}
}
