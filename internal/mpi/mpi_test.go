//go:build mpi

package mpi

import "testing"

// Run under mpirun -np N (and works as a singleton): every collective
// against its closed form.
func TestCollectives(t *testing.T) {
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Finalize()
	n, r := c.Size(), c.Rank()
	f32 := []float32{float32(r + 1), 1}
	if err := c.SumFloat32(f32); err != nil || f32[0] != float32(n*(n+1)/2) || f32[1] != float32(n) {
		t.Errorf("float32 sum %v (%v)", f32, err)
	}
	f64 := []float64{float64(r) * 0.5}
	if err := c.SumFloat64(f64); err != nil || f64[0] != float64(n*(n-1))/4 {
		t.Errorf("float64 sum %v (%v)", f64, err)
	}
	i64 := []int64{1 << 40}
	if err := c.SumInt64(i64); err != nil || i64[0] != int64(n)<<40 {
		t.Errorf("int64 sum %v (%v)", i64, err)
	}
	mx := []float64{float64(r)}
	if err := c.MaxFloat64(mx); err != nil || mx[0] != float64(n-1) {
		t.Errorf("max %v (%v)", mx, err)
	}
	b := []byte{0, 0, 0}
	if r == 0 {
		b = []byte{7, 8, 9}
	}
	if err := c.Broadcast(b, 0); err != nil || b[0] != 7 || b[2] != 9 {
		t.Errorf("broadcast %v (%v)", b, err)
	}
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
	if err := c.Broadcast(b, n+5); err == nil {
		t.Error("a broadcast from a rank that does not exist returned no error")
	}
}
