package models

import (
	"testing"

	"github.com/dptrain/dptrain/models/nn"
)

// TestFLOPsHandCount checks the per-sample FLOP counts against counts done
// by hand from the architectures' shapes.
func TestFLOPsHandCount(t *testing.T) {
	cnn, err := MNISTCNNNet[float32](64)
	if err != nil {
		t.Fatal(err)
	}
	// conv1 1→16, k8 s2 p3 on 28×28: 14×14 = 196 positions, C·K² = 64.
	// maxpool 2/1: 13×13; conv2 16→32, k4 s2: 5×5 = 25 positions, C·K² = 256.
	// maxpool 2/1: 4×4; fc 512→32, fc 32→10.
	conv1, conv2 := int64(2*16*64*196), int64(2*32*256*25)
	fc1, fc2 := int64(2*512*32), int64(2*32*10)
	var convs []*nn.Conv2d[float32]
	for _, l := range []int{0, 3} {
		convs = append(convs, cnnLayer(t, cnn, l))
	}
	norm := int64(2*(512+32) + 2*(32+10))
	for k, c := range []struct{ p, ckk, cout int64 }{{196, 64, 16}, {25, 256, 32}} {
		if convs[k].GhostNorm() {
			norm += 2*c.p*c.p*(c.ckk+c.cout) + 2*c.p*c.p
		} else {
			norm += 2*c.cout*c.ckk*c.p + 2*c.cout*c.ckk
		}
	}
	mlp, err := MLPNet[float32](784, []int{256, 128}, 10, "relu", 64)
	if err != nil {
		t.Fatal(err)
	}
	m1, m2, m3 := int64(2*784*256), int64(2*256*128), int64(2*128*10)
	for _, tc := range []struct {
		name string
		got  nn.FLOPs
		want nn.FLOPs
	}{
		{"cnn", cnn.FLOPs(), nn.FLOPs{
			Forward:  conv1 + conv2 + fc1 + fc2, // 844,416
			Backward: conv1 + 2*(conv2+fc1+fc2), // no input gradient for conv1
			Norm:     norm,
		}},
		{"mlp", mlp.FLOPs(), nn.FLOPs{
			Forward:  m1 + m2 + m3,
			Backward: m1 + 2*(m2+m3),
			Norm:     2*(784+256) + 2*(256+128) + 2*(128+10),
		}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: FLOPs %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
	if f := cnn.FLOPs().Forward; f != 844416 {
		t.Errorf("cnn forward %d, want 844416", f)
	}
}

// cnnLayer is the conv layer at index i of the CNN's top level.
func cnnLayer(t *testing.T, net *nn.Network[float32], i int) *nn.Conv2d[float32] {
	t.Helper()
	c, ok := net.Layers()[i].(*nn.Conv2d[float32])
	if !ok {
		t.Fatalf("layer %d is %T, not a Conv2d", i, net.Layers()[i])
	}
	return c
}

// TestFLOPsResNet20 pins ResNet-20's count (the issue quotes ≈ 245 MFLOP
// forward+backward per 32×32 sample): forward is 2 × 40.6M multiply-adds.
func TestFLOPsResNet20(t *testing.T) {
	net, err := ResNetGNNet[float32](CIFAR, [3]int{3, 3, 3}, 10, 8)
	if err != nil {
		t.Fatal(err)
	}
	f := net.FLOPs()
	// Stem 3→16 on 32²: 2·16·27·1024. Stage 1: 6 convs 16→16 on 32²:
	// 6·2·16·144·1024. Stage 2: 32 on 16² (first from 16): 2·32·144·256 +
	// 5·2·32·288·256 + proj 2·32·16·256. Stage 3 likewise at 64 on 8².
	// fc 64→10.
	want := int64(2*16*27*1024) +
		int64(6*2*16*144*1024) +
		int64(2*32*144*256+5*2*32*288*256+2*32*16*256) +
		int64(2*64*288*64+5*2*64*576*64+2*64*32*64) +
		int64(2*64*10)
	if f.Forward != want {
		t.Errorf("resnet20 forward %d, want %d", f.Forward, want)
	}
	if stem := int64(2 * 16 * 27 * 1024); f.Backward != 2*f.Forward-stem {
		t.Errorf("resnet20 backward %d, want %d", f.Backward, 2*f.Forward-stem)
	}
	t.Logf("resnet20: forward %.1f MFLOP, forward+backward %.1f MFLOP, norms %.1f MFLOP",
		float64(f.Forward)/1e6, float64(f.NonDP())/1e6, float64(f.Norm)/1e6)
}
