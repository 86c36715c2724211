//go:build amd64 && !purego

#include "textflag.h"

// func laneSumAVX2(v *float32, n int, acc *[4]float64) uint32
//
// acc[l] += float64(v[k+l])² for k = 0, 4, … < n (n a multiple of 4), one
// multiply and one add per element in element order within each lane (no
// fused multiply-add): laneSum's scalar loop bit for bit. Returns the
// largest |v[k]| as float32 bits (max of the bits with the sign cleared).
TEXT ·laneSumAVX2(SB), NOSPLIT, $0-28
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         acc+16(FP), DX
	VMOVUPD      (DX), Y0
	VPXOR        X1, X1, X1
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X2
	VPBROADCASTD X2, X2

loop:
	CMPQ      CX, $4
	JL        done
	VMOVUPS   (SI), X3
	VCVTPS2PD X3, Y4
	VMULPD    Y4, Y4, Y4
	VADDPD    Y4, Y0, Y0
	VPAND     X2, X3, X3
	VPMAXUD   X3, X1, X1
	ADDQ      $16, SI
	SUBQ      $4, CX
	JMP       loop

done:
	VMOVUPD Y0, (DX)
	VPSHUFD $0x4e, X1, X3
	VPMAXUD X3, X1, X1
	VPSHUFD $0xb1, X1, X3
	VPMAXUD X3, X1, X1
	VMOVD   X1, AX
	MOVL    AX, ret+24(FP)
	VZEROUPPER
	RET
