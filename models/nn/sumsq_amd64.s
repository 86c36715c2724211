//go:build amd64 && !purego

#include "textflag.h"

// func sumSq4AVX512(x *float32, stride, n int, lanes *[16]float64)
//
// The four partial sums of vec.SumSquares for four rows at once: row r
// (at x + r·stride) gets lanes[4r+k] = Σ x_r[i]², i ≡ k (mod 4), i < n, in
// increasing i, each square exact in float64 (a float32's square fits its
// 53 bits) and each sum a float64 addition acc + square, as the Go loop
// does. One row's four lanes form a chain of n/4 dependent additions,
// which no vector width shortens; four rows in two registers run two
// chains (of 8 lanes) side by side. n is a multiple of 4.
TEXT ·sumSq4AVX512(SB), NOSPLIT, $0-32
	MOVQ   x+0(FP), SI
	MOVQ   stride+8(FP), R8
	SHLQ   $2, R8
	MOVQ   n+16(FP), CX
	LEAQ   (SI)(R8*1), DI
	LEAQ   (SI)(R8*2), DX
	LEAQ   (DI)(R8*2), BX
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1

sq_loop:
	CMPQ        CX, $4
	JL          sq_done
	VMOVUPS     (SI), X2
	VINSERTF128 $1, (DI), Y2, Y2
	VCVTPS2PD   Y2, Z2
	VMULPD      Z2, Z2, Z2
	VADDPD      Z2, Z0, Z0
	VMOVUPS     (DX), X3
	VINSERTF128 $1, (BX), Y3, Y3
	VCVTPS2PD   Y3, Z3
	VMULPD      Z3, Z3, Z3
	VADDPD      Z3, Z1, Z1
	ADDQ        $16, SI
	ADDQ        $16, DI
	ADDQ        $16, DX
	ADDQ        $16, BX
	SUBQ        $4, CX
	JMP         sq_loop

sq_done:
	MOVQ    lanes+24(FP), AX
	VMOVUPD Z0, (AX)
	VMOVUPD Z1, 64(AX)
	VZEROUPPER
	RET
