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

// func tanh16AVX512(out, x *float32, n int, c *[15][8]float32)
//
// tanh8AVX2 sixteen lanes at a time (n a multiple of 16): the same
// operations with the same operands in the same order, the constants
// broadcast from c's first column into Z16…Z30 and the final choice made
// with mask registers.
TEXT ·tanh16AVX512(SB), NOSPLIT, $0-32
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         c+24(FP), DX
	VBROADCASTSS 0(DX), Z16   // clamp
	VBROADCASTSS 32(DX), Z17  // −clamp
	VBROADCASTSS 64(DX), Z18  // tiny
	VBROADCASTSS 96(DX), Z19  // −tiny
	VBROADCASTSS 128(DX), Z20 // a13
	VBROADCASTSS 160(DX), Z21 // a11
	VBROADCASTSS 192(DX), Z22 // a9
	VBROADCASTSS 224(DX), Z23 // a7
	VBROADCASTSS 256(DX), Z24 // a5
	VBROADCASTSS 288(DX), Z25 // a3
	VBROADCASTSS 320(DX), Z26 // a1
	VBROADCASTSS 352(DX), Z27 // b6
	VBROADCASTSS 384(DX), Z28 // b4
	VBROADCASTSS 416(DX), Z29 // b2
	VBROADCASTSS 448(DX), Z30 // b0

loop512:
	CMPQ    CX, $16
	JL      done512
	VMOVUPS (SI), Z0

	VMAXPS Z0, Z17, Z1
	VMINPS Z1, Z16, Z1
	VMULPS Z1, Z1, Z2

	VMULPS Z2, Z20, Z3
	VADDPS Z21, Z3, Z3
	VMULPS Z2, Z3, Z3
	VADDPS Z22, Z3, Z3
	VMULPS Z2, Z3, Z3
	VADDPS Z23, Z3, Z3
	VMULPS Z2, Z3, Z3
	VADDPS Z24, Z3, Z3
	VMULPS Z2, Z3, Z3
	VADDPS Z25, Z3, Z3
	VMULPS Z2, Z3, Z3
	VADDPS Z26, Z3, Z3
	VMULPS Z1, Z3, Z3

	VMULPS Z2, Z27, Z4
	VADDPS Z28, Z4, Z4
	VMULPS Z2, Z4, Z4
	VADDPS Z29, Z4, Z4
	VMULPS Z2, Z4, Z4
	VADDPS Z30, Z4, Z4
	VDIVPS Z4, Z3, Z3

	VCMPPS  $0x11, Z18, Z0, K1     // x < tiny
	VCMPPS  $0x1E, Z19, Z0, K1, K2 // and x > −tiny
	VMOVAPS Z0, K2, Z3

	VMOVUPS Z3, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     loop512

done512:
	VZEROUPPER
	RET
