//go:build amd64 && !purego

#include "textflag.h"

// func tanh8AVX2(out, x *float32, n int, c *[15][8]float32)
//
// out[i] = tanh32(x[i]) for i < n (a multiple of 8), eight lanes at a time,
// with the scalar code's operations in its order (multiplies and adds, not
// fused; IEEE division), so every lane equals tanh32 bit for bit. c holds
// the constants, each broadcast to 8 lanes: clamp, −clamp, tiny, −tiny,
// a13, a11, a9, a7, a5, a3, a1, b6, b4, b2, b0.
TEXT ·tanh8AVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	VMOVUPS 0(DX), Y15  // clamp
	VMOVUPS 32(DX), Y14 // −clamp
	VMOVUPS 64(DX), Y13 // tiny
	VMOVUPS 96(DX), Y12 // −tiny

loop:
	CMPQ CX, $8
	JL   done
	VMOVUPS (SI), Y0

	// x clamped to [−clamp, clamp]; x is the second source so a NaN passes.
	VMAXPS Y0, Y14, Y1
	VMINPS Y1, Y15, Y1
	VMULPS Y1, Y1, Y2 // x²

	// p = ((((((a13·x² + a11)·x² + a9)·x² + a7)·x² + a5)·x² + a3)·x² + a1)·x
	VMOVUPS 128(DX), Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  160(DX), Y3, Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  192(DX), Y3, Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  224(DX), Y3, Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  256(DX), Y3, Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  288(DX), Y3, Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  320(DX), Y3, Y3
	VMULPS  Y1, Y3, Y3

	// q = ((b6·x² + b4)·x² + b2)·x² + b0
	VMOVUPS 352(DX), Y4
	VMULPS  Y2, Y4, Y4
	VADDPS  384(DX), Y4, Y4
	VMULPS  Y2, Y4, Y4
	VADDPS  416(DX), Y4, Y4
	VMULPS  Y2, Y4, Y4
	VADDPS  448(DX), Y4, Y4
	VDIVPS  Y4, Y3, Y3 // p / q

	// −tiny < x < tiny keeps x itself.
	VCMPPS    $0x11, Y13, Y0, Y5 // x < tiny
	VCMPPS    $0x1E, Y12, Y0, Y6 // x > −tiny
	VANDPS    Y6, Y5, Y5
	VBLENDVPS Y5, Y0, Y3, Y3

	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VZEROUPPER
	RET
