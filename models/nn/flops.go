package nn

// FLOPs is the arithmetic of one sample through a network, counted from the
// layer shapes: a multiply-add is 2 FLOPs, and only the matrix products of
// Linear and Conv2d layers are counted (activations, pooling and GroupNorm
// are O(activations), small beside them, and memory-bound anyway). It is the
// useful work, not what a kernel happens to execute: the input gradient of a
// strided convolution is counted as the product it is, whichever layout
// computes it.
type FLOPs struct {
	// Forward is the forward pass.
	Forward int64
	// Backward is the input gradients (not for the first layer, which needs
	// none) and the weight gradients (one product per sample, or one over the
	// batch: the same count).
	Backward int64
	// Norm is the extra work of a DP step's per-sample gradient norms: ‖x‖²
	// and ‖dy‖² for Linear; for Conv2d the two P×P Gram matrices of the ghost
	// norm, or the per-sample weight gradient and its squared sum.
	Norm int64
}

// NonDP is the work of a non-private step (forward and backward).
func (f FLOPs) NonDP() int64 { return f.Forward + f.Backward }

// DP is the work of a DP step: forward, backward and the per-sample norms.
func (f FLOPs) DP() int64 { return f.Forward + f.Backward + f.Norm }

// FLOPs counts the per-sample arithmetic of n's layers (see type FLOPs).
func (n *Network[T]) FLOPs() FLOPs {
	var f FLOPs
	countFLOPs[T](n.body, false, &f)
	return f
}

// countFLOPs walks l as Backward does: needDx says whether l's input gradient
// is computed.
func countFLOPs[T Float](l Layer[T], needDx bool, f *FLOPs) {
	switch l := l.(type) {
	case *Sequential[T]:
		for i, c := range l.layers {
			countFLOPs(c, i > 0 || needDx, f)
		}
	case *Residual[T]:
		countFLOPs(l.Body, needDx, f)
		if l.Shortcut != nil {
			countFLOPs(l.Shortcut, needDx, f)
		}
	case *Linear[T]:
		mul := 2 * int64(l.In) * int64(l.Out)
		f.Forward += mul
		f.Backward += mul
		if needDx {
			f.Backward += mul
		}
		f.Norm += 2 * int64(l.In+l.Out)
	case *Conv2d[T]:
		cout, ckk, p := int64(l.Cout), int64(l.ckk), int64(l.p)
		mul := 2 * cout * ckk * p
		f.Forward += mul
		f.Backward += mul
		if needDx {
			f.Backward += mul
		}
		if l.gram {
			f.Norm += 2*p*p*(ckk+cout) + 2*p*p
		} else {
			f.Norm += mul + 2*cout*ckk
		}
	default:
		if c, ok := l.(Container[T]); ok {
			for _, ch := range c.Children() {
				countFLOPs(ch, true, f)
			}
		}
	}
}

// GhostNorm reports whether the layer computes per-sample norms by the
// ghost-norm identity (two P×P Gram matrices) rather than from the
// per-sample weight gradient; Build chooses by cost and memory.
func (l *Conv2d[T]) GhostNorm() bool { return l.gram }

// Layers is the network's top-level layers, in order.
func (n *Network[T]) Layers() []Layer[T] { return n.body.layers }
