//go:build amd64 && !purego

#include "textflag.h"

// func maxPool2S1AVX(y, r0, r1 *float32, n int)
//
// y[j] = max(r0[j], r0[j+1], r1[j], r1[j+1]) for j < n (a multiple of 8):
// one output row of 2×2, stride-1 max-pooling from two input rows (each at
// least n+1 long), eight outputs at a time, without the argmax.
TEXT ·maxPool2S1AVX(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX

loop:
	CMPQ    CX, $8
	JL      done
	VMOVUPS (SI), Y0
	VMAXPS  4(SI), Y0, Y0
	VMOVUPS (DX), Y1
	VMAXPS  4(DX), Y1, Y1
	VMAXPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VZEROUPPER
	RET
